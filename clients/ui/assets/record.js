// What ran and what changed: on the run page, "since it last worked" in
// the failure card, the record of what ran, and the machine's use (sys/
// series) charted beside the run's own metrics; on the runs list, tick
// boxes; and the compare view (#/compare?runs=A,B,... or ?sweep=ID). Uses app.js's
// helpers (esc, short, dur, num, COLORS, terminal).
"use strict";

window.runboxRecord = (() => {
  const TICKS = "runbox-ticked";
  const ticked = () => new Set(JSON.parse(sessionStorage.getItem(TICKS) || "[]"));
  const saveTicks = s => sessionStorage.setItem(TICKS, JSON.stringify([...s]));
  const mib = b => (b / 1048576).toFixed(1) + " MiB";

  // ---- run page ----
  let sysAt = 0, sysRun = "", sysDone = false;
  function run(p) {
    const r = p.run;
    const sw = r.since_worked;
    if (sw) {
      let card = document.querySelector("#failure .failure");
      if (!card) {
        document.getElementById("failure").innerHTML = `<div class="card failure"></div>`;
        card = document.querySelector("#failure .failure");
      }
      const old = document.getElementById("since-worked");
      if (old) old.remove();
      const div = document.createElement("div");
      div.id = "since-worked";
      div.innerHTML = `<h4>since it last worked <span class="muted">(run <a href="#/run/${esc(sw.run_id)}">${esc(sw.short_id || sw.run_id)}</a> succeeded)</span></h4>
        <ul>${sw.summary.map(l => `<li>${esc(l)}</li>`).join("")}</ul>`;
      card.appendChild(div);
    }
    const rec = r.record, side = document.getElementById("side");
    if (rec && side && !document.getElementById("what-ran")) {
      const c = rec.code, it = rec.interpreter, h = rec.host, im = rec.image;
      const rows = [];
      if (c) rows.push(["code", `git ${esc((c.commit || "").slice(0, 12))} ${esc(c.branch || "")}${c.remote ? ` <span class="muted">${esc(c.remote)}</span>` : ""}${c.dirty ? `, uncommitted: ${esc((c.diff_files || []).join(", "))}${(c.untracked || []).length ? `, ${c.untracked.length} untracked` : ""}` : ""}${c.diff_cut ? ` <span class="muted">(${esc(c.diff_cut)})</span>` : ""}`]);
      if (it) rows.push(["interpreter", `${esc(it.path)} ${esc(it.version || "")}${it.packages ? `, ${Object.keys(it.packages).length} packages` : ""}${it.conda ? `, conda ${esc(it.conda)}` : ""}${it.note ? ` <span class="muted">${esc(it.note)}</span>` : ""}`]);
      if (im) rows.push(["image", `${esc(im.name)} <span class="muted">${esc(im.digest || (im.id || "").slice(7, 19))}</span>`]);
      if (h) rows.push(["host", `${esc(h.os)} ${esc(h.kernel || "")}, ${h.cpus} cpus, ${mib(h.memory_bytes || 0)}${(h.gpus || []).length ? `, ${esc(h.gpus.map(g => g.name).join(", "))} (driver ${esc(h.driver)}, CUDA ${esc(h.cuda)})` : ""}`]);
      if (rec.snapshot) rows.push(["snapshot", `${rec.snapshot.files} files, ${mib(rec.snapshot.bytes)}`]);
      for (const n of rec.notes || []) rows.push(["note", esc(n)]);
      const div = document.createElement("div");
      div.className = "card";
      div.id = "what-ran";
      div.innerHTML = `<h3>what ran${rec.complete ? "" : ` <span class="muted">(being completed)</span>`}</h3><dl>${rows.map(([k, v]) => `<dt>${k}</dt><dd>${v}</dd>`).join("")}</dl>`;
      side.appendChild(div);
    }
    // The machine's series: every 2 s while the run goes on, once after.
    const now = Date.now();
    if (sysRun !== r.id) { sysRun = r.id; sysAt = 0; sysDone = false; }
    if (sysDone) return;
    if (terminal(r.state)) sysDone = true;
    else if (now - sysAt < 2000) return;
    sysAt = now;
    loadSys(r.id);
  }

  async function loadSys(id) {
    const res = await fetch(`/api/runs/${encodeURIComponent(id)}/sys`);
    if (!res.ok) return;
    const m = await res.json();
    let box = document.getElementById("sys-charts");
    if (!box) {
      const charts = document.getElementById("charts");
      if (!charts) return;
      const card = document.createElement("div");
      card.className = "card";
      card.innerHTML = `<h3>machine <span class="muted">(cpu, memory, I/O${m.series.some(s => s.name.startsWith("sys/gpu")) ? ", gpu" : ""}; sampled every second at first)</span></h3><div id="sys-charts" class="charts"></div>`;
      charts.parentElement.after(card);
      box = document.getElementById("sys-charts");
    }
    window.runboxSysCharts = window.runboxSysCharts || {};
    for (const s of m.series) {
      const data = [s.step, s.value.map(v => typeof v === "number" ? v : null)];
      const peak = Math.max(...s.max.filter(v => v != null));
      let u = window.runboxSysCharts[s.name];
      if (u && u.root.isConnected) { u.setData(data); u.root.parentElement.querySelector("h4").textContent = `${s.name} (peak ${num(peak)})`; continue; }
      const div = document.createElement("div");
      div.className = "sys-chart"; // not .chart: the run's own charts are those
      div.dataset.metric = s.name;
      div.innerHTML = `<h4>${esc(s.name)} (peak ${num(peak)})</h4>`;
      box.appendChild(div);
      u = new uPlot({ width: 380, height: 160, series: [{ label: "second" }, { label: s.name, stroke: COLORS[1], width: 1.5 }],
        scales: { x: { time: false } }, axes: [{ label: "seconds" }, { size: axisSize }] }, data, div);
      window.runboxSysCharts[s.name] = u;
    }
  }

  // ---- runs list: tick runs, compare them ----
  function ticks(tb) {
    const set = ticked();
    let bar = document.getElementById("compare-bar");
    if (!bar) {
      bar = document.createElement("span");
      bar.id = "compare-bar";
      bar.innerHTML = `<button id="compare-ticked" disabled>compare ticked</button> <a href="#" id="untick" class="muted">clear</a>`;
      document.querySelector(".filters").appendChild(bar);
      document.getElementById("compare-ticked").onclick = () => { location.hash = "#/compare?runs=" + [...ticked()].join(","); };
      document.getElementById("untick").onclick = e => { e.preventDefault(); saveTicks(new Set()); for (const b of document.querySelectorAll("input.tick")) b.checked = false; count(); };
    }
    const count = () => {
      const n = ticked().size, b = document.getElementById("compare-ticked");
      b.textContent = `compare ticked (${n})`;
      b.disabled = n < 1;
    };
    for (const tr of tb.querySelectorAll("tr.run")) {
      const td = tr.firstElementChild;
      if (!td || td.querySelector("input.tick")) continue;
      const box = document.createElement("input");
      box.type = "checkbox";
      box.className = "tick";
      box.dataset.id = tr.dataset.id;
      box.checked = set.has(tr.dataset.id);
      box.onclick = e => {
        e.stopPropagation();
        const s = ticked();
        box.checked ? s.add(box.dataset.id) : s.delete(box.dataset.id);
        saveTicks(s);
        count();
      };
      td.prepend(box, " ");
    }
    count();
  }

  // ---- compare view ----
  async function comparePage(query) {
    const q = new URLSearchParams(query);
    const runs = (q.get("runs") || "").split(",").filter(Boolean);
    const api = new URLSearchParams();
    runs.forEach(r => api.append("run", r));
    if (q.get("label")) api.append("label", q.get("label"));
    if (q.get("sweep")) api.set("sweep", q.get("sweep"));
    if (q.get("sort")) api.set("sort", q.get("sort"));
    if (q.get("all") === "1") api.set("all_params", "1");
    if (q.get("filter")) api.append("filter", q.get("filter"));
    main.innerHTML = `<div class="card"><h2 style="margin:.2em 0">compare</h2>
      <div class="filters"><label><input type="checkbox" id="all-params" ${q.get("all") === "1" ? "checked" : ""}> all params</label>
      <input id="cmp-filter" placeholder="param=value" size="18" value="${esc(q.get("filter") || "")}"><span class="muted" id="cmp-count"></span></div>
      <div id="cmp-table" class="muted">loading…</div></div>
      <div class="card"><h3>curves</h3><div id="cmp-charts" class="charts"></div></div>`;
    const go = changes => {
      for (const [k, v] of Object.entries(changes)) v ? q.set(k, v) : q.delete(k);
      location.hash = "#/compare?" + q;
    };
    document.getElementById("all-params").onchange = e => go({ all: e.target.checked ? "1" : "" });
    document.getElementById("cmp-filter").onchange = e => go({ filter: e.target.value.trim() });
    const res = await fetch("/api/compare?" + api);
    const c = await res.json();
    const box = document.getElementById("cmp-table");
    if (!res.ok) { box.textContent = c.error || res.statusText; return; }
    box.classList.remove("muted");
    document.getElementById("cmp-count").textContent = `${c.total} run(s), sorted by ${c.sort}`;
    const cols = [["run", "created"], ["state", "state"], ...c.params.map(p => [p, "param:" + p])];
    for (const m of c.metrics) {
      cols.push([m + " last", "last:" + m]);
      if (c.goals[m]) cols.push([`${m} best (${c.goals[m]})`, "best:" + m]);
    }
    cols.push(["duration", "duration"]);
    const cur = c.sort.replace(/^-/, ""), rev = c.sort.startsWith("-");
    box.innerHTML = `<table id="compare"><thead><tr>${cols.map(([label, key]) => `<th class="sortable" data-sort="${esc(key)}"${key.startsWith("param:") ? ` data-param="${esc(key.slice(6))}"` : ""}>${esc(label)}${key === cur ? (rev ? " ▼" : " ▲") : ""}</th>`).join("")}</tr></thead>
      <tbody>${c.rows.map(r => `<tr class="cmp-row" data-id="${esc(r.run_id)}">
        <td><a href="#/run/${esc(r.run_id)}">${esc(r.short_id || r.run_id.slice(0, 10))}</a> ${esc(r.name || "")}</td>
        <td class="state s-${esc(r.state)}">${esc(r.state)} ${esc(r.failure_code || "")}</td>
        ${c.params.map(p => `<td data-param="${esc(p)}">${esc((r.params || {})[p] ?? "-")}</td>`).join("")}
        ${c.metrics.map(m => { const v = (r.metrics || {})[m]; return `<td>${v ? num(v.last) : "-"}</td>` + (c.goals[m] ? `<td data-best="${esc(m)}">${v && v.best != null ? num(v.best) : "-"}</td>` : ""); }).join("")}
        <td>${r.duration_seconds ? dur(r.duration_seconds) : "-"}</td></tr>`).join("")}</tbody></table>`;
    for (const th of box.querySelectorAll("th.sortable")) {
      th.onclick = () => go({ sort: (th.dataset.sort === cur && !rev ? "-" : "") + th.dataset.sort });
    }
    overlay(c);
  }

  // overlay draws each metric of the compared runs on one chart per metric.
  async function overlay(c) {
    const box = document.getElementById("cmp-charts");
    const ms = await Promise.all(c.rows.map(r => fetch(`/api/runs/${encodeURIComponent(r.run_id)}/metrics`).then(x => x.ok ? x.json() : null)));
    window.runboxCompareCharts = {};
    for (const name of c.metrics) {
      const runs = c.rows.map((r, i) => ({ r, s: ms[i] && ms[i].series.find(s => s.name === name) })).filter(x => x.s);
      if (!runs.length) continue;
      const xs = [...new Set(runs.flatMap(x => x.s.step))].sort((a, b) => a - b);
      const data = [xs], series = [{ label: "step" }];
      runs.forEach((x, i) => {
        const at = new Map(x.s.step.map((s, j) => [s, j]));
        data.push(xs.map(s => at.has(s) && typeof x.s.value[at.get(s)] === "number" ? x.s.value[at.get(s)] : null));
        series.push({ label: x.r.short_id || x.r.run_id.slice(0, 10), stroke: COLORS[i % COLORS.length], width: 1.5, spanGaps: true });
      });
      const div = document.createElement("div");
      div.className = "chart";
      div.dataset.metric = name;
      div.dataset.runs = String(runs.length);
      div.innerHTML = `<h4>${esc(name)}</h4>`;
      box.appendChild(div);
      window.runboxCompareCharts[name] = new uPlot({ width: 580, height: 230, series, scales: { x: { time: false } }, axes: [{ label: "step" }, { size: axisSize }] }, data, div);
    }
  }

  return { run, ticks, comparePage };
})();
