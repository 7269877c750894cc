// An independent MCP client: the official TypeScript SDK spawns
// `runbox mcp` over stdio and follows the compute-local flow as an agent
// would. The SDK validates every structuredContent against the tool's
// output schema. Run by clients/mcp's TestNodeClient with RUNBOX_BIN (the
// runbox binary), RUNBOX_HOME and WORKDIR set; exits non-zero on the first
// failed check.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import assert from "node:assert/strict";

const { RUNBOX_BIN, RUNBOX_HOME, WORKDIR } = process.env;
assert.ok(RUNBOX_BIN && RUNBOX_HOME && WORKDIR, "set RUNBOX_BIN, RUNBOX_HOME and WORKDIR");

const transport = new StdioClientTransport({
  command: RUNBOX_BIN,
  args: ["mcp"],
  cwd: WORKDIR,
  env: { ...process.env, RUNBOX_HOME },
  stderr: "inherit",
});
const client = new Client({ name: "runbox-node-test", version: "1.0.0" });
await client.connect(transport);

function step(msg) {
  console.log(`node flow: ${msg}`);
}

async function call(name, args, opts) {
  const res = await client.callTool({ name, arguments: args }, undefined, opts);
  const text = res.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
  assert.ok(!res.isError, `${name}(${JSON.stringify(args)}) failed: ${text}`);
  assert.ok(res.structuredContent, `${name}: no structured content`);
  assert.ok(text.length > 0, `${name}: no text summary`);
  return res.structuredContent;
}

async function waitDone(runId) {
  let progress = 0;
  const r = await call("local_wait", { run_id: runId, timeout_seconds: 120 }, {
    onprogress: () => { progress++; },
    resetTimeoutOnProgress: true,
    timeout: 60_000,
  });
  assert.equal(r.done, true, `run ${runId} not done: ${r.state}`);
  return r;
}

// 1. The tools of the contract.
const { tools } = await client.listTools();
const names = tools.map((t) => t.name).sort();
assert.deepEqual(names, ["compute_plan", "list_compute_backends", "local_execute", "local_logs", "local_status", "local_stop", "local_wait"]);
for (const t of tools) {
  assert.ok(t.description.length > 80, `${t.name}: short description`);
  assert.ok(t.outputSchema, `${t.name}: no output schema`);
}
step(`tools: ${names.join(", ")}`);

const backends = await call("list_compute_backends", {});
assert.equal(backends.backends[0].name, "local");
assert.equal(backends.backends[0].available, true);
step(`backend local available, auto → ${backends.backends[0].auto}`);

// 2. plan → execute → wait → status of a script missing a module.
writeFileSync(join(WORKDIR, "train.py"), "import runbox_missing_pkg\nprint('training')\n");
const plan = await call("compute_plan", { backend: "local", command: "python3 train.py", task_description: "train a small model" });
assert.ok(plan.plan_id);
assert.equal(typeof plan.smokeSupported, "boolean");
assert.ok(Array.isArray(plan.risks));
step(`plan ${plan.plan_id}: sandbox ${plan.sandbox} (${plan.sandbox_reason})`);

const run = await call("local_execute", { plan_id: plan.plan_id });
assert.ok(run.run_id);
assert.equal(run.attempt, 1);
await waitDone(run.run_id);
const failed = await call("local_status", { run_id: run.run_id });
assert.equal(failed.state, "failed");
assert.equal(failed.failure?.code, "MODULE_NOT_FOUND", JSON.stringify(failed.failure));
assert.equal(failed.failure.details?.module, "runbox_missing_pkg");
assert.ok(failed.failure.suggestions?.length > 0, "no suggestions");
step(`run ${run.run_id} failed: ${failed.failure.code} (${failed.failure.details.module}); next: ${failed.failure.suggestions[0]}`);

const logs = await call("local_logs", { run_id: run.run_id, tail_lines: 5 });
assert.match(logs.text, /ModuleNotFoundError/);

// 3. The retry with parent_run_id keeps the lineage.
writeFileSync(join(WORKDIR, "train.py"), "print('training')\n");
const plan2 = await call("compute_plan", { backend: "local", command: "python3 train.py", parent_run_id: run.run_id });
assert.equal(plan2.experience?.failed, 1, JSON.stringify(plan2.experience));
const retry = await call("local_execute", { plan_id: plan2.plan_id, parent_run_id: run.run_id });
await waitDone(retry.run_id);
const retried = await call("local_status", { run_id: retry.run_id });
assert.equal(retried.state, "succeeded");
assert.equal(retried.parent_run_id, run.run_id);
assert.equal(retried.attempt, 2);
step(`retry ${retry.run_id}: ${retried.state}, attempt ${retried.attempt}, parent ${retried.parent_run_id}`);

// 4. A long run that local_stop ends as cancelled.
writeFileSync(join(WORKDIR, "long.py"), [
  "import json, time",
  "for i in range(1, 601):",
  "    print('##PROGRESS## ' + json.dumps({'step': i, 'total': 600, 'phase': 'training'}), flush=True)",
  "    time.sleep(0.2)",
].join("\n") + "\n");
const plan3 = await call("compute_plan", { backend: "local", command: ["python3", "long.py"] });
const long = await call("local_execute", { plan_id: plan3.plan_id });
const going = await call("local_wait", { run_id: long.run_id, timeout_seconds: 1 });
assert.equal(going.done, false);
const stopped = await call("local_stop", { run_id: long.run_id });
assert.equal(stopped.state, "cancelled");
const after = await call("local_status", { run_id: long.run_id });
assert.equal(after.state, "cancelled");
assert.equal(after.done, true);
step(`long run ${long.run_id} stopped: ${after.state}`);

// 5. Bad input is a tool error, not a broken server.
const bad = await client.callTool({ name: "local_status", arguments: { run_id: "01NOSUCHRUN" } });
assert.equal(bad.isError, true);
const bad2 = await client.callTool({ name: "compute_plan", arguments: { backend: "modal", command: "true" } });
assert.equal(bad2.isError, true);
step("bad input answered with tool errors");

await client.close();
console.log("node flow: all checks passed");
