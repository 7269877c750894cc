package mcp

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api/client"
)

// The official MCP Inspector CLI (npm @modelcontextprotocol/inspector
// 2.12, installed by `npm ci` in testdata/node) drives the real `runbox
// mcp` as a user would try it. Its stdio transport hands the server only
// HOME, LOGNAME, PATH, SHELL, TERM and USER, and it is itself launched
// with nothing else (env -i), while the daemon was started earlier from a
// full environment with XDG_RUNTIME_DIR set (so it listens there). It
// sets every argument of every tool from the command line, numbers and
// objects included, through the flow plan → put a file → execute → wait
// (timeout_seconds) → status → list → read a result file → logs → stop.
func TestInspectorCLI(t *testing.T) {
	node, bin := needNode(t)
	inspector, _ := filepath.Abs(filepath.Join("testdata", "node", "node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js"))
	if _, err := os.Stat(inspector); err != nil {
		skipOrFail(t, "the Inspector is not installed: run npm ci in testdata/node")
	}
	top, err := os.MkdirTemp("/tmp", "rbi")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(top) })
	home, rt, work := filepath.Join(top, "h"), filepath.Join(top, "rt"), filepath.Join(top, "w")
	for _, d := range []string{home, rt, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(home, ".local", "state", "runbox")

	// The daemon, started from a full environment.
	var full []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "RUNBOX_") && !strings.HasPrefix(k, "XDG_") && k != "HOME" {
			full = append(full, kv)
		}
	}
	full = append(full, "HOME="+home, "XDG_RUNTIME_DIR="+rt)
	start := exec.Command(bin, "run", "--", "true")
	start.Env, start.Dir = full, work
	if out, err := start.CombinedOutput(); err != nil {
		t.Fatalf("start the daemon: %v\n%s", err, out)
	}
	t.Cleanup(func() { stopDaemonAt(t, home, filepath.Join(rt, "runbox.sock")) })
	if _, err := os.Stat(filepath.Join(rt, "runbox.sock")); err != nil {
		t.Fatalf("the daemon should listen in the runtime dir: %v", err)
	}

	if err := os.WriteFile(filepath.Join(work, "job.sh"), []byte("tr a-z A-Z < in.txt > out.txt\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	minimal := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	call := func(tool string, args ...string) map[string]any {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		argv := []string{inspector, "--cli", "--cwd", work, bin, "mcp", "--method", "tools/call", "--tool-name", tool}
		if len(args) > 0 {
			argv = append(argv, "--tool-arg")
			argv = append(argv, args...)
		}
		cmd := exec.CommandContext(ctx, node, argv...)
		cmd.Env, cmd.Dir = minimal, work
		out, err := cmd.Output()
		var res struct {
			IsError           bool             `json:"isError"`
			Content           []map[string]any `json:"content"`
			StructuredContent map[string]any   `json:"structuredContent"`
		}
		if jerr := json.Unmarshal(out, &res); jerr != nil || err != nil || res.IsError {
			stderr := ""
			if ee, ok := err.(*exec.ExitError); ok {
				stderr = string(ee.Stderr)
			}
			t.Fatalf("inspector %s %v: %v / %v\nstdout: %s\nstderr: %s", tool, args, err, jerr, out, stderr)
		}
		return res.StructuredContent
	}
	str := func(m map[string]any, k string) string { s, _ := m[k].(string); return s }

	be := call("list_compute_backends")
	if bs, _ := be["backends"].([]any); len(bs) != 1 {
		t.Fatalf("backends: %v", be)
	}
	plan := call("compute_plan", "backend=local", "command=tr a-z A-Z < in.txt > out.txt && echo converted",
		"task_description=upper-case a file", "script_path=job.sh", "workdir="+work,
		`backend_data={"recommendations":{"sandbox":"process","timeout_minutes":5,"memory":"1g"}}`)
	planID := str(plan, "plan_id")
	if planID == "" || plan["timeout_minutes"] != 5.0 || plan["memory_bytes"] != float64(1<<30) {
		t.Fatalf("plan: %v", plan)
	}
	call("local_put_file", "plan_id="+planID, "path=in.txt", "content=hello ", "encoding=text", "append=false")
	put := call("local_put_file", "plan_id="+planID, "path=in.txt", "content=d29ybGQ=", "encoding=base64", "append=true")
	if put["size"] != 11.0 {
		t.Fatalf("put: %v", put)
	}
	ex := call("local_execute", "plan_id="+planID, "timeout_minutes=5")
	runID := str(ex, "run_id")
	w := call("local_wait", "run_id="+runID, "timeout_seconds=30")
	if w["done"] != true || str(w, "state") != "succeeded" {
		t.Fatalf("wait: %v", w)
	}
	st := call("local_status", "run_id="+runID)
	if str(st, "state") != "succeeded" {
		t.Fatalf("status: %v", st)
	}
	ls := call("local_list_files", "run_id="+runID, "path=.", "offset=0", "limit=10")
	if !strings.Contains(toJSON(ls), `"out.txt"`) {
		t.Fatalf("list: %v", ls)
	}
	rd := call("local_read_file", "run_id="+runID, "path=out.txt", "offset=0", "max_bytes=100")
	if str(rd, "text") != "HELLO WORLD" {
		t.Fatalf("read: %v", rd)
	}
	lg := call("local_logs", "run_id="+runID, "stream=all", "tail_lines=5")
	if !strings.Contains(str(lg, "text"), "converted") {
		t.Fatalf("logs: %v", lg)
	}
	call("local_logs", "run_id="+runID, "stream=stdout", "since_offset=0")
	call("local_list_files", "plan_id="+planID)
	call("local_read_file", "plan_id="+planID, "path=in.txt")
	// A retry's lineage, and a stop.
	plan2 := call("compute_plan", "backend=local", `command=["sleep","30"]`, "parent_run_id="+runID)
	ex2 := call("local_execute", "plan_id="+str(plan2, "plan_id"), "parent_run_id="+runID)
	call("local_put_file", "run_id="+str(ex2, "run_id"), "path=note.txt", "content=while it runs")
	stop := call("local_stop", "run_id="+str(ex2, "run_id"))
	if str(stop, "state") != "cancelled" || stop["attempt"] != 2.0 {
		t.Fatalf("stop: %v", stop)
	}
	// One daemon: the client found it through the home, and none was
	// started where a minimal environment would have put it.
	if _, err := os.Stat(filepath.Join(state, "runbox.sock")); err == nil {
		t.Error("a second daemon listened in the home")
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// stopDaemonAt ends the daemon listening at socket.
func stopDaemonAt(t testing.TB, home, socket string) {
	c := client.New(client.Options{Home: home, Socket: socket})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if runs, err := c.List(ctx, nil); err == nil {
		for _, r := range runs {
			if !r.State.Terminal() {
				_, _ = c.Stop(ctx, r.ID, time.Second)
			}
		}
	}
	h, err := c.Health(ctx)
	if err != nil {
		return
	}
	_ = syscall.Kill(h.PID, syscall.SIGTERM)
	for range 100 {
		if _, err := c.Health(ctx); err != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
}
