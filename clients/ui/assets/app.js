// runbox dashboard: a runs list and a run page, fed by Server-Sent Events.
// The token for POSTs comes from the page (which only the cookie set from
// the printed URL could open); GETs and the stream ride on that cookie.
"use strict";
const TOKEN = document.querySelector('meta[name="runbox-token"]').content;
const main = document.getElementById("main");
const live = document.getElementById("live");
let stream = null;
window.runboxCharts = {};

// html is s escaped for HTML: a run's log lines, shown as the run wrote
// them (as `runbox logs` gives them).
function html(s) {
  return String(s ?? "").replace(/[&<>"']/g, c => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" }[c]));
}
// HIDDEN matches what runbox's CLI views write as escapes
// (internal/printable): controls but tab and newline, DEL, C1 controls,
// the line and paragraph separators, and format characters (U+202E, the
// right-to-left override, reverses what follows it; zero-width ones hide).
// TestBrowserShowsHiddenRunesAsTheCLIDoes checks it against Go's set.
const HIDDEN = /[\0-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\p{Cf}]/gu;
// shown is s with its hidden characters written as escapes (\x1b,
// \u202e), as `runbox status` shows them: a run's name, reason or a log
// line a classifier quotes cannot make the page read other than it is.
function shown(s) {
  return String(s ?? "").replace(HIDDEN, c => {
    const n = c.codePointAt(0), hex = w => n.toString(16).padStart(w, "0");
    return n === 13 ? "\\r" : n < 0x80 ? "\\x" + hex(2) : n <= 0xffff ? "\\u" + hex(4) : "\\U" + hex(8);
  });
}
// esc is what the page writes of any text a run supplied: shown, then
// escaped for HTML.
function esc(s) { return html(shown(s)); }
function dur(sec) {
  if (!isFinite(sec) || sec < 0) return "";
  sec = Math.round(sec);
  const h = Math.floor(sec / 3600), m = Math.floor(sec % 3600 / 60), s = sec % 60;
  return h ? `${h}h${String(m).padStart(2, "0")}m` : m ? `${m}m${String(s).padStart(2, "0")}s` : `${s}s`;
}
function runDuration(r) {
  if (!r.started_at) return "";
  const end = r.ended_at ? new Date(r.ended_at) : new Date();
  return dur((end - new Date(r.started_at)) / 1000);
}
function pct(r) {
  const p = r.progress;
  if (!p) return null;
  if (p.percentage) return p.percentage;
  if (p.total) return 100 * (p.step || 0) / p.total;
  return null;
}
function bar(r) {
  const v = pct(r);
  if (v == null) return "";
  return `<span class="bar"><i style="width:${Math.min(100, v).toFixed(1)}%"></i></span> ${v.toFixed(0)}%`;
}
// command is the run's command as one shell line, control characters
// escaped (the daemon's command_line, as `runbox status` shows it).
function command(r) { return r.spec && (r.spec.command_line || (r.spec.command || []).join(" ")) || ""; }
// short is how a run is named to people: its number (what `runbox ls`
// shows and commands take), or the start of its id from an older daemon.
function short(r) { return r.short_id || (r.id || r.run_id || "").slice(0, 10); }
function terminal(s) { return ["succeeded", "failed", "timed_out", "cancelled", "lost"].includes(s); }

function listen(url, handlers) {
  if (stream) stream.close();
  stream = new EventSource(url);
  stream.onopen = () => live.classList.add("on");
  stream.onerror = () => live.classList.remove("on");
  for (const [name, fn] of Object.entries(handlers)) {
    stream.addEventListener(name, ev => fn(JSON.parse(ev.data)));
  }
}

async function post(path) {
  const r = await fetch(path, { method: "POST", headers: { "X-Runbox-Token": TOKEN } });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// ---- runs list ----
function listPage() {
  const params = new URLSearchParams(location.hash.split("?")[1] || "");
  main.innerHTML = `
    <div class="filters">
      <select id="f-state"><option value="">all states</option>
        ${["queued", "preparing", "running", "succeeded", "failed", "timed_out", "cancelled", "lost"].map(s => `<option>${s}</option>`).join("")}
      </select>
      <input id="f-q" placeholder="filter by name, command, number or id" size="32">
      <span class="muted" id="count"></span>
    </div>
    <table><thead><tr><th>run</th><th>state</th><th>name</th><th>command</th><th>sandbox</th><th>progress</th><th>duration</th><th>failure</th></tr></thead>
    <tbody id="runs"><tr><td colspan="8" class="muted">loading…</td></tr></tbody></table>`;
  const st = document.getElementById("f-state"), q = document.getElementById("f-q");
  st.value = params.get("state") || "";
  q.value = params.get("q") || "";
  const open = () => {
    const p = new URLSearchParams();
    if (st.value) p.set("state", st.value);
    if (q.value) p.set("q", q.value);
    listen("/api/stream?" + p, { runs: renderRuns });
  };
  st.onchange = open;
  let t;
  q.oninput = () => { clearTimeout(t); t = setTimeout(open, 250); };
  open();
}

function renderRuns(l) {
  const tb = document.getElementById("runs");
  if (!tb) return;
  document.getElementById("count").textContent = `${l.runs.length} run(s)`;
  if (!l.runs.length) {
    tb.innerHTML = `<tr><td colspan="8" class="muted">no runs</td></tr>`;
    return;
  }
  tb.innerHTML = l.runs.map(r => `
    <tr class="run" data-id="${esc(r.id)}" data-state="${esc(r.state)}">
      <td><a href="#/run/${esc(r.id)}" title="${esc(r.id)}">${esc(short(r))}</a></td>
      <td class="state s-${esc(r.state)}">${esc(r.state)}${waiting(r)}</td>
      <td>${esc(r.name)}</td>
      <td class="cmd" title="${esc(command(r))}">${esc(command(r))}</td>
      <td>${esc(r.sandbox)}</td>
      <td>${bar(r)}</td>
      <td>${runDuration(r)}</td>
      <td>${esc(r.failure ? r.failure.code : "")}</td>
    </tr>`).join("");
  for (const tr of tb.querySelectorAll("tr.run")) tr.onclick = () => { location.hash = "#/run/" + tr.dataset.id; };
  runboxRecord.ticks(tb); // record.js
}

// ---- run page ----
let related = {};
function runPage(id) {
  window.runboxCharts = {};
  related = {};
  lastMetrics = null;
  main.innerHTML = `<div class="card"><div class="title"><h2 style="margin:.2em 0" id="title">loading…</h2><div class="actions" id="actions"></div></div><div id="head"></div></div>
    <div id="failure"></div>
    <div class="card"><h3>metrics</h3><div id="charts" class="charts"></div></div>
    <div class="grid"><div class="card"><h3>log</h3><pre class="log" id="log"></pre></div><div id="side"></div></div>`;
  let lastLog = 0;
  listen("/api/stream?run=" + encodeURIComponent(id), {
    run: p => {
      renderHead(p);
      runboxRecord.run(p); // record.js
      loadRelated(p);
      const now = Date.now();
      if (now - lastLog > 700 || terminal(p.run.state)) { lastLog = now; loadLog(p.run); }
    },
    metrics: renderCharts,
  });
}

function renderHead(p) {
  const r = p.run, pr = r.progress || {};
  const eta = !terminal(r.state) && pr.eta_seconds ? `ETA ${dur(pr.eta_seconds)}` : "";
  const rate = pr.rate ? `${pr.rate.toFixed(pr.rate < 10 ? 2 : 0)} ${esc(pr.rate_unit || "it/s")}` : "";
  const steps = pr.total ? `${pr.step || 0}/${pr.total}` : pr.step ? `step ${pr.step}` : "";
  const u = r.exit && r.exit.usage;
  document.getElementById("title").innerHTML = `${esc(r.name || "run " + short(r))} <span class="state s-${esc(r.state)}" id="state">${esc(r.state)}</span>`;
  // The buttons are redrawn only when the run ends, not on every progress
  // update: a click must not land on a button being replaced.
  const acts = document.getElementById("actions"), ended = String(terminal(r.state));
  if (acts.dataset.ended !== ended) {
    acts.dataset.ended = ended;
    acts.innerHTML = terminal(r.state) ? `<button id="retry">retry</button>` : `<button class="danger" id="stop">stop</button>`;
    const stop = document.getElementById("stop"), retry = document.getElementById("retry");
    if (stop) stop.onclick = () => { stop.disabled = true; post(`/api/runs/${encodeURIComponent(r.id)}/stop`).catch(e => alert(e.message)); };
    if (retry) retry.onclick = () => post(`/api/runs/${encodeURIComponent(r.id)}/retry`).then(n => { location.hash = "#/run/" + n.id; }).catch(e => alert(e.message));
  }
  document.getElementById("head").innerHTML = `
    <dl>
      <dt>run</dt><dd>${esc(short(r))} <span class="muted">${esc(r.id)}</span></dd>
      <dt>command</dt><dd><code>${esc(command(r))}</code></dd>
      <dt>sandbox</dt><dd>${esc(r.sandbox)} <span class="muted">${esc(r.sandbox_reason || "")}</span></dd>
      <dt>progress</dt><dd>${bar(r)} ${esc(steps)} ${rate} ${eta} <span class="muted">${esc(pr.phase || "")}</span></dd>
      <dt>duration</dt><dd>${runDuration(r)}</dd>
      ${r.reason ? `<dt>reason</dt><dd>${esc(r.reason)}</dd>` : ""}
      ${r.exit ? `<dt>exit</dt><dd>${r.exit.code} ${esc(r.exit.signal || "")}</dd>` : ""}
      ${u && u.wall_seconds ? `<dt>usage</dt><dd>cpu ${u.cpu_seconds.toFixed(2)}s, peak memory ${(u.peak_rss_bytes / 1048576).toFixed(1)} MiB</dd>` : ""}
      ${r.parent_run_id ? `<dt>retry of</dt><dd><a href="#/run/${esc(r.parent_run_id)}">${esc(r.parent_run_id)}</a> (attempt ${r.attempt})</dd>` : ""}
      ${p.retries.length ? `<dt>retries</dt><dd>${p.retries.map(k => `<a href="#/run/${esc(k.id)}">${esc(short(k))}</a> <span class="s-${esc(k.state)}">${esc(k.state)}</span>`).join(", ")}</dd>` : ""}
    </dl>`;
  const f = r.failure;
  document.getElementById("failure").innerHTML = f ? `<div class="card failure"><h3>${esc(f.code)} <span class="muted">confidence ${f.confidence.toFixed(2)}${f.retryable ? ", retryable" : ""}</span></h3>
    <p>${esc(f.message)}</p>${(f.suggestions || []).length ? `<ul>${f.suggestions.map(s => `<li>${esc(s)}</li>`).join("")}</ul>` : ""}</div>` : "";
  window.runboxEvidence = (f && f.evidence) || [];
  const side = [];
  if (p.plan) {
    const risks = (p.plan.result && p.plan.result.risks) || [];
    const x = p.plan.experience;
    side.push(`<div class="card"><h3>plan</h3>${risks.length ? `<ul>${risks.map(k => `<li><b>${esc(k.severity)}</b> ${esc(k.message)}</li>`).join("")}</ul>` : `<p class="muted">no risks found</p>`}
      ${x ? `<p>experience: ${x.runs} similar run(s), ${x.succeeded} succeeded, ${x.failed} failed${x.median_duration_seconds ? `, median ${dur(x.median_duration_seconds)}` : ""}</p>` : ""}</div>`);
  }
  document.getElementById("side").innerHTML = side.join("");
}

async function loadLog(r) {
  const res = await fetch(`/api/runs/${encodeURIComponent(r.id)}/log?tail=400`);
  if (!res.ok) return;
  const { lines } = await res.json();
  const pre = document.getElementById("log");
  if (!pre) return;
  const follow = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
  const ev = window.runboxEvidence || [];
  pre.innerHTML = lines.map(l => {
    const cls = [l.s === 2 || l.s === 4 ? "e" : l.s === 5 ? "m" : ""];
    if (ev.some(e => e && l.t.includes(e.trim()))) cls.push("hl");
    return `<span class="${cls.join(" ")}">${html(l.t)}</span>`;
  }).join("");
  if (follow) pre.scrollTop = pre.scrollHeight;
}

// loadRelated fetches the metrics of the run's parent and retries, to
// overlay them, and redraws the charts when they add something.
let lastMetrics = null;
async function loadRelated(p) {
  const ids = [p.run.parent_run_id, ...p.retries.map(k => k.id)].filter(Boolean);
  let changed = false;
  for (const id of ids) {
    if (related[id] && terminal(related[id].state)) continue;
    const res = await fetch(`/api/runs/${encodeURIComponent(id)}/metrics`);
    if (res.ok) { related[id] = await res.json(); changed = true; }
  }
  if (changed && lastMetrics) renderCharts(lastMetrics);
}

const COLORS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9"];

// Axis ticks. uPlot's own increments stop at 1e16 (a loss of 1e302 got
// no labels at all) and include fractions (steps 1.1, 1.2, ...). Steps
// are integers: their ticks are whole multiples of 1, 2 or 5. Values get
// increments over the whole float range and, far from 1, labels in
// scientific form.
function incrs(from, to) {
  const out = [];
  for (let e = from; e <= to; e++) for (const m of [1, 2, 5]) out.push(m * 10 ** e);
  return out;
}
const STEP_INCRS = incrs(0, 18), VALUE_INCRS = incrs(-300, 307);
function num(v) {
  if (v == null) return "";
  if (typeof v === "string") return v; // "NaN", "Infinity", "-Infinity": the answer's words for them
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e6 || a < 1e-4)) return v.toExponential(2).replace(/\.?0+e/, "e");
  return String(+v.toPrecision(6));
}
function axisSize(u, values) {
  const longest = Math.max(3, ...(values || []).map(v => String(v).length));
  return 24 + 8 * longest; // tick and gap, then the label
}
// The hover legend's value, in the same form as the axis (uPlot's own
// writes 1e302 with all 303 digits).
const legendValue = (u, v) => v == null ? "--" : num(v);

// A metric value from the API: a number, or "NaN", "Infinity",
// "-Infinity" (JSON has no such numbers). fin is the value to draw, null
// (a gap in the line) for the non-finite ones.
const fin = v => typeof v === "number" ? v : null;

// nonFiniteMarks puts a mark at each non-finite value of series s (on the
// shared steps xs), level with the last finite value before it, where the
// line breaks off: a loss gone NaN must show, not vanish from the chart.
function nonFiniteMarks(s, xs) {
  const at = new Map(s.step.map((x, j) => [x, j]));
  let level = s.value.map(fin).find(v => v !== null) ?? 0, any = false;
  const ys = xs.map(x => {
    if (!at.has(x)) return null;
    const v = s.value[at.get(x)];
    if (fin(v) !== null) { level = v; return null; }
    any = true;
    return level;
  });
  return any ? ys : null;
}

// One chart per metric, the run's series first, related runs overlaid;
// x is the step. NaN and ±Inf are gaps in the line with a red mark where
// they happened; a downsampled series also shows the min/max of each bucket.
function renderCharts(m) {
  const box = document.getElementById("charts");
  if (!box) return;
  lastMetrics = m;
  if (!m.series.length) {
    box.innerHTML = `<p class="muted" id="no-metrics">this run has reported no metrics${terminal(m.state) ? "" : " yet"}</p>`;
    return;
  }
  const none = document.getElementById("no-metrics");
  if (none) none.remove();
  // progress/percent is the bar above over again: not drawn.
  const drawn = m.series.filter(s => s.name !== "progress/percent");
  if (!drawn.length) {
    box.innerHTML = `<p class="muted" id="no-metrics">this run has reported no metrics${terminal(m.state) ? "" : " yet"} (its progress is the bar above)</p>`;
    return;
  }
  const ordered = [...drawn].sort((a, b) => (a.name.startsWith("progress/") - b.name.startsWith("progress/")) || a.name.localeCompare(b.name));
  for (const s of ordered) {
    const runs = [{ id: m.run_id, m, s }];
    for (const [id, rm] of Object.entries(related)) {
      const o = rm.series.find(x => x.name === s.name);
      if (o) runs.push({ id, m: rm, s: o });
    }
    // a shared x axis: the union of steps
    const xs = [...new Set(runs.flatMap(r => r.s.step))].sort((a, b) => a - b);
    const data = [xs];
    const series = [{ label: "step" }];
    runs.forEach((r, i) => {
      const at = new Map(r.s.step.map((x, j) => [x, j]));
      data.push(xs.map(x => at.has(x) ? fin(r.s.value[at.get(x)]) : null));
      series.push({ label: i === 0 ? shown(s.name) : short(r.m), stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: i > 0, value: legendValue });
      if (i === 0 && s.span > 1) {
        for (const k of ["min", "max"]) {
          data.push(xs.map(x => at.has(x) ? r.s[k][at.get(x)] : null));
          series.push({ label: k, stroke: COLORS[0] + "55", width: 1, value: legendValue });
        }
      }
    });
    const marks = nonFiniteMarks(runs[0].s, xs);
    if (marks) {
      data.push(marks);
      series.push({ label: "NaN/Inf", stroke: "#C00000", fill: "#C00000", paths: () => null, points: { show: true, size: 9, width: 2 } });
    }
    let u = window.runboxCharts[s.name];
    if (u && u.series.length === series.length) {
      u.setData(data);
    } else {
      if (u) { const old = u.root.parentElement; u.destroy(); old.remove(); }
      const div = document.createElement("div");
      div.className = "chart";
      div.dataset.metric = s.name;
      const h = document.createElement("h4");
      h.textContent = shown(s.name) + (s.span > 1 ? ` (${s.total} samples, ${s.span} per point: line = last, faint = min/max)` : "");
      div.appendChild(h);
      box.appendChild(div);
      const axes = [
        { label: "step", incrs: STEP_INCRS, values: (u, vs) => vs.map(num) },
        { incrs: VALUE_INCRS, values: (u, vs) => vs.map(num), size: axisSize },
      ];
      u = new uPlot({ width: 580, height: 230, series, scales: { x: { time: false } }, axes, cursor: { drag: { x: true, y: false } } }, data, div);
      window.runboxCharts[s.name] = u;
    }
    u.root.parentElement.dataset.points = String(s.step.length);
  }
}

// waiting is why a queued run has not started ("waiting for 2 GPUs (1
// free: 3)", "sweep limit 2 reached", ...), under its state.
function waiting(r) {
  if (r.state !== "queued" || !r.reason || r.reason === "queued") return "";
  return `<div class="reason muted">${esc(r.reason)}</div>`;
}

// ---- sweeps ----
let sweepTimer = null;
function poll(fn) {
  if (sweepTimer) clearInterval(sweepTimer);
  fn();
  sweepTimer = setInterval(fn, 1500);
}
function counts(sw) {
  return Object.entries(sw.counts || {}).map(([k, v]) => `${v} ${esc(k)}`).join(", ");
}
function sweepsPage() {
  if (stream) { stream.close(); stream = null; }
  main.innerHTML = `<table><thead><tr><th>sweep</th><th>name</th><th>members</th><th>parallel</th><th>state</th><th>command</th></tr></thead>
    <tbody id="sweeps"><tr><td colspan="6" class="muted">loading…</td></tr></tbody></table>`;
  poll(async () => {
    const res = await fetch("/api/sweeps");
    if (!res.ok) return;
    const l = (await res.json()).sweeps || [];
    const tb = document.getElementById("sweeps");
    if (!tb) return;
    tb.innerHTML = l.length ? l.map(sw => `
      <tr class="sweep" data-id="${esc(sw.id)}">
        <td><a href="#/sweep/${esc(sw.id)}">${esc(sw.id.slice(0, 12))}</a></td><td>${esc(sw.name)}</td>
        <td>${sw.members}</td><td>${sw.parallel || "-"}</td>
        <td>${counts(sw)}${sw.stopped ? ` <span class="muted">(${esc(sw.stopped)})</span>` : ""}</td>
        <td class="cmd">${esc(sw.command_line || (sw.command || []).join(" "))}</td></tr>`).join("")
      : `<tr><td colspan="6" class="muted">no sweeps</td></tr>`;
  });
}

let sweepSort = { key: "", dir: 1 };
let sweepMetrics = {};
function sweepPage(id) {
  if (stream) { stream.close(); stream = null; }
  window.runboxCharts = {};
  sweepMetrics = {};
  main.innerHTML = `<div class="card"><h2 style="margin:.2em 0" id="title">loading…</h2><div id="summary" class="muted"></div>
    <p><a id="sweep-compare" href="#/compare?sweep=${encodeURIComponent(id)}">compare its members</a></p></div>
    <div class="card"><table id="members"></table></div>
    <div class="card"><h3>metrics</h3><div id="charts" class="charts"></div></div>`;
  poll(async () => {
    const res = await fetch(`/api/sweeps/${encodeURIComponent(id)}`);
    if (!res.ok) return;
    const sw = await res.json();
    if (!document.getElementById("members")) return;
    document.getElementById("title").textContent = `sweep ${shown(sw.name) || sw.id.slice(0, 12)}`;
    document.getElementById("summary").innerHTML = `${sw.members} members: ${counts(sw)}${sw.stopped ? " — " + esc(sw.stopped) : ""}`;
    renderMembers(sw);
    for (const r of sw.runs || []) {
      if (sweepMetrics[r.id] && terminal(sweepMetrics[r.id].state)) continue;
      const mr = await fetch(`/api/runs/${encodeURIComponent(r.id)}/metrics`);
      if (mr.ok) sweepMetrics[r.id] = await mr.json();
    }
    renderSweepCharts(sw);
  });
}
function memberValue(r, key) {
  if (key.startsWith("m:")) { const m = (r.metrics || {})[key.slice(2)]; return m && typeof m.best === "number" ? m.best : null; } // "NaN": none
  if (key.startsWith("p:")) { const v = (r.params || {})[key.slice(2)]; const n = Number(v); return isNaN(n) ? v : n; }
  if (key === "state") return r.state;
  if (key === "progress") return r.progress ?? null;
  return r.index;
}
function renderMembers(sw) {
  const metrics = [...new Set((sw.runs || []).flatMap(r => Object.keys(r.metrics || {})))].filter(n => n !== "progress/percent").sort();
  const cols = [["run", "index"], ...sw.param_names.map(p => [p, "p:" + p]), ["state", "state"], ["progress", "progress"],
    ...metrics.map(m => [m + " last/best", "m:" + m]), ["failure", "failure"]];
  const rows = [...(sw.runs || [])];
  if (sweepSort.key) {
    rows.sort((a, b) => {
      const x = memberValue(a, sweepSort.key), y = memberValue(b, sweepSort.key);
      if (x == null) return y == null ? 0 : 1;
      if (y == null) return -1;
      return (x < y ? -1 : x > y ? 1 : 0) * sweepSort.dir;
    });
  }
  const t = document.getElementById("members");
  t.innerHTML = `<thead><tr>${cols.map(([label, key]) => `<th data-key="${esc(key)}" class="sortable">${esc(label)}${sweepSort.key === key ? (sweepSort.dir > 0 ? " ▲" : " ▼") : ""}</th>`).join("")}</tr></thead>
    <tbody>${rows.map(r => `<tr class="member" data-id="${esc(r.id)}">
      <td><a href="#/run/${esc(r.id)}">${esc(r.short_id || r.id.slice(0, 10))}</a></td>
      ${sw.param_names.map(p => `<td>${esc((r.params || {})[p])}</td>`).join("")}
      <td class="state s-${esc(r.state)}">${esc(r.state)}${waiting(r)}</td>
      <td>${r.progress != null ? r.progress.toFixed(0) + "%" : ""}</td>
      ${metrics.map(m => { const v = (r.metrics || {})[m]; return `<td class="metric" data-metric="${esc(m)}">${v ? num(v.last) + " / " + num(v.best) : ""}</td>`; }).join("")}
      <td>${esc(r.failure || "")}</td></tr>`).join("")}</tbody>`;
  for (const th of t.querySelectorAll("th.sortable")) th.onclick = () => {
    sweepSort = { key: th.dataset.key, dir: sweepSort.key === th.dataset.key ? -sweepSort.dir : 1 };
    renderMembers(sw);
  };
}
// One chart per metric with every member's curve overlaid.
function renderSweepCharts(sw) {
  const box = document.getElementById("charts");
  if (!box) return;
  const names = [...new Set(Object.values(sweepMetrics).flatMap(m => m.series.map(s => s.name)))].filter(n => n !== "progress/percent").sort();
  for (const name of names) {
    const runs = (sw.runs || []).map(r => ({ r, s: sweepMetrics[r.id] && sweepMetrics[r.id].series.find(x => x.name === name) })).filter(x => x.s);
    const xs = [...new Set(runs.flatMap(x => x.s.step))].sort((a, b) => a - b);
    const data = [xs], series = [{ label: "step" }];
    runs.forEach((x, i) => {
      const at = new Map(x.s.step.map((v, j) => [v, j]));
      data.push(xs.map(v => at.has(v) ? fin(x.s.value[at.get(v)]) : null));
      const label = sw.param_names.map(p => `${p}=${(x.r.params || {})[p]}`).join(" ");
      series.push({ label, stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: true, value: legendValue });
    });
    let u = window.runboxCharts[name];
    if (u && u.series.length === series.length) { u.setData(data); continue; }
    if (u) { const old = u.root.parentElement; u.destroy(); old.remove(); }
    const div = document.createElement("div");
    div.className = "chart";
    div.dataset.metric = name;
    div.dataset.members = String(runs.length);
    const h = document.createElement("h4");
    h.textContent = shown(name);
    div.appendChild(h);
    box.appendChild(div);
    const axes = [{ label: "step", incrs: STEP_INCRS, values: (u, vs) => vs.map(num) }, { incrs: VALUE_INCRS, values: (u, vs) => vs.map(num), size: axisSize }];
    window.runboxCharts[name] = new uPlot({ width: 580, height: 230, series, scales: { x: { time: false } }, axes }, data, div);
  }
}

function route() {
  const h = location.hash;
  if (sweepTimer) { clearInterval(sweepTimer); sweepTimer = null; }
  if (h.startsWith("#/run/")) runPage(decodeURIComponent(h.slice(6).split("?")[0]));
  else if (h.startsWith("#/sweep/")) sweepPage(decodeURIComponent(h.slice(8).split("?")[0]));
  else if (h.startsWith("#/sweeps")) sweepsPage();
  else if (h.startsWith("#/compare")) runboxRecord.comparePage(h.split("?")[1] || ""); // record.js
  else listPage();
}
window.addEventListener("hashchange", route);
route();
