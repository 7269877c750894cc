package mcp

import (
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/sdk"
)

// The tools' descriptions say when to use each: a model picks tools by
// them.
const (
	descBackends = `List the compute backends and whether they can run now. Use it once, before the first compute_plan, to confirm the "local" backend is available; it also says which sandbox (docker or process) runs use by default and why. Runs over MCP use the process or docker sandbox on this machine; a Slurm cluster, where runbox has one, is for the runbox CLI only.`
	descPlan     = `Plan a command before running it on the local backend: checks the script, assesses risks (with severity), finds a smoke test (--smoke/--dry-run/--validate flags), recommends sandbox, timeout and memory with reasons, and summarises similar past runs. Nothing runs. Call it first for every run, then pass the plan_id to local_execute. To retry a failed run, call it again (with the fix) and set parent_run_id to the failed run's id. backend_data.recommendations overrides the planner (sandbox, image, timeout_minutes, memory) — the planner is usually right.`
	descExecute  = `Start a planned run and return its run_id at once; the run goes on in the background. When the plan has a smoke test, it runs first and the full run starts only if it passes. Then follow it with local_wait (blocks) or local_status (returns at once). Set parent_run_id when this run retries a failed one.`
	descStatus   = `Get a run's state without waiting: latest progress (step/total/percentage/phase/metrics/ETA), and for an ended run its exit, usage and failure analysis (code, message, suggestions, retryable, evidence), with its parent_run_id and attempt number. Use it to check on a run; use local_wait to block until it ends.`
	descWait     = `Block until a run ends or timeout_seconds pass (default 45, at most 600; keep it under your client's own timeout), then return the same as local_status plus done: true if the run has ended. When done is false, call it again. Sends MCP progress notifications while it blocks when the request carries a progress token.`
	descStop     = `Stop a run and its whole process tree (SIGTERM, then SIGKILL after the grace period) and return its final state (cancelled). Safe to call on a run that already ended or that someone else stopped: it says how the run ended.`
	descLogs     = `Read a run's output as UTF-8 text, bounded to 32 KiB per call. Use tail_lines for the last lines (e.g. a traceback), or since_offset to page forward (not both): each answer gives next_offset to pass back; an offset past the end reads nothing and gives the end as next_offset. Without either, returns the end of the output. Works while the run is going and after it ended.`
)

func (s *server) register(srv *mcpsdk.Server) {
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "list_compute_backends", Title: "List compute backends", Description: descBackends,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, s.listBackends)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "compute_plan", Title: "Plan a local run", Description: descPlan,
		InputSchema: planSchema(),
	}, s.plan)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "local_execute", Title: "Start a planned run", Description: descExecute,
		InputSchema: executeSchema(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(false)},
	}, s.execute)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "local_status", Title: "Run status", Description: descStatus,
		OutputSchema: infer[runOut](), InputSchema: runSchema(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, s.status)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "local_wait", Title: "Wait for a run", Description: descWait,
		OutputSchema: infer[runOut](), InputSchema: waitSchema(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true},
	}, s.wait)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "local_stop", Title: "Stop a run", Description: descStop,
		OutputSchema: infer[runOut](), InputSchema: runSchema(),
		Annotations: &mcpsdk.ToolAnnotations{DestructiveHint: new(true), IdempotentHint: true},
	}, s.stop)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{
		Name: "local_logs", Title: "Read a run's output", Description: descLogs,
		InputSchema: logsSchema(),
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true},
	}, s.logs)
	s.registerFiles(srv) // files.go
}

// metricsSchema is sdk.Metrics' JSON: numbers, and the strings "NaN",
// "Infinity", "-Infinity" for the values a log printed as nan or inf. The
// tools whose result carries progress set OutputSchema with it: the MCP
// SDK's own inference says numbers only, and validates results by it.
var metricsSchema = &jsonschema.Schema{Type: "object", AdditionalProperties: &jsonschema.Schema{
	Description: `a number, or "NaN", "Infinity", "-Infinity" when the log printed nan or inf`,
	AnyOf:       []*jsonschema.Schema{{Type: "number"}, {Type: "string", Enum: []any{sdk.JSONNaN, sdk.JSONInf, sdk.JSONNegInf}}},
}}

// infer is the schema of T, which is a struct of this package: it cannot
// fail.
func infer[T any]() *jsonschema.Schema {
	sc, err := jsonschema.For[T](&jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
		reflect.TypeFor[sdk.Metrics](): metricsSchema,
	}})
	if err != nil {
		panic(fmt.Sprintf("mcp: schema of %T: %v", *new(T), err))
	}
	return sc
}

func idProp(sc *jsonschema.Schema, name string) {
	sc.Properties[name].MinLength = new(1)
}

func timeoutMinutesProp(p *jsonschema.Schema) {
	p.ExclusiveMinimum = new(0.0)
	p.Maximum = new(float64(maxTimeoutMins))
}

func planSchema() *jsonschema.Schema {
	sc := inferIn[planIn]()
	sc.Properties["backend"].Enum = []any{"local"}
	cmd := sc.Properties["command"]
	cmd.Types = []string{"string", "array"}
	cmd.Items = &jsonschema.Schema{Type: "string"}
	cmd.MinLength, cmd.MinItems = new(1), new(1)
	rec := sc.Properties["backend_data"].Properties["recommendations"]
	rec.Properties["sandbox"].Enum = []any{"process", "docker", "auto"}
	timeoutMinutesProp(rec.Properties["timeout_minutes"])
	rec.Properties["memory"].Types = []string{"string", "integer"}
	return sc
}

func executeSchema() *jsonschema.Schema {
	sc := inferIn[executeIn]()
	idProp(sc, "plan_id")
	timeoutMinutesProp(sc.Properties["timeout_minutes"])
	return sc
}

func runSchema() *jsonschema.Schema {
	sc := inferIn[runIn]()
	idProp(sc, "run_id")
	return sc
}

func waitSchema() *jsonschema.Schema {
	sc := inferIn[waitIn]()
	idProp(sc, "run_id")
	t := sc.Properties["timeout_seconds"]
	t.Minimum, t.Maximum = new(0.0), new(maxWait.Seconds())
	t.Default = []byte(fmt.Sprint(defaultWait.Seconds()))
	return sc
}

func logsSchema() *jsonschema.Schema {
	sc := inferIn[logsIn]()
	idProp(sc, "run_id")
	sc.Properties["stream"].Enum = []any{"stdout", "stderr", "setup-stdout", "setup-stderr", "all"}
	tl := sc.Properties["tail_lines"]
	tl.Minimum, tl.Maximum = new(1.0), new(float64(maxTailLines))
	sc.Properties["since_offset"].Minimum = new(0.0)
	return sc
}
