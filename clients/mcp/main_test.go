package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/host/daemon/daemontest"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
	"github.com/runbox/runbox/sandbox/slurm"
)

// The tests drive the server with the SDK's own client over an in-memory
// transport, against a real daemon: this test binary re-executed as
// "__daemon" (a real store, the built-in plugins, the process sandbox), its
// runs supervised by the test binary re-executed as "__supervise". The
// daemon is a separate process so that a test can kill it mid-call.
func TestMain(m *testing.M) {
	if len(os.Args) > 3 && os.Args[1] == "__daemon" {
		os.Exit(daemonMain(os.Args[2], os.Args[3]))
	}
	supervisortest.Main(m) // also the supervisor and the confine entry
}

// slurmEnv set: the test daemon has the slurm sandbox too.
const slurmEnv = "RUNBOX_MCP_TEST_SLURM"

// daemonMain is the test daemon: home, socket.
func daemonMain(home, socket string) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	opts, release, err := daemontest.Config(home, socket, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer release()
	if os.Getenv(slurmEnv) != "" { // a Slurm cluster's commands are on PATH
		opts.Sandboxes[sandbox.Slurm] = slurm.New(slurm.Options{})
	}
	if err := daemon.Run(ctx, opts); err != nil {
		fmt.Fprintln(os.Stderr, "test daemon:", err)
		return 1
	}
	return 0
}

type testDaemon struct {
	home, socket string
	c            *client.Client
	cmd          *exec.Cmd
	killed       bool
}

func startDaemon(t testing.TB) *testDaemon {
	t.Helper()
	home := t.TempDir()
	sockDir, err := os.MkdirTemp("", "rbm")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	d := &testDaemon{home: home, socket: filepath.Join(sockDir, "s")}
	d.start(t)
	t.Cleanup(func() { d.stop(t) })
	return d
}

// start runs the daemon process and waits for its socket.
func (d *testDaemon) start(t testing.TB) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.OpenFile(filepath.Join(d.home, "daemon.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer logf.Close()
	d.cmd = exec.Command(exe, "__daemon", d.home, d.socket)
	d.cmd.Stdout, d.cmd.Stderr = logf, logf
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	d.killed = false
	d.c = client.New(client.Options{Home: d.home, Socket: d.socket})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := d.c.Health(context.Background()); err == nil {
			return
		} else if time.Now().After(deadline) {
			b, _ := os.ReadFile(filepath.Join(d.home, "daemon.log"))
			t.Fatalf("daemon did not answer: %v\n%s", err, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// kill ends the daemon at once, as a crash would.
func (d *testDaemon) kill(t testing.TB) {
	t.Helper()
	_ = d.cmd.Process.Kill()
	_ = d.cmd.Wait()
	d.killed = true
}

// stop cancels what still runs, then ends the daemon.
func (d *testDaemon) stop(t testing.TB) {
	if d.killed {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if runs, err := d.c.List(ctx, nil); err == nil {
		for _, r := range runs {
			if !r.State.Terminal() {
				_, _ = d.c.Stop(ctx, r.ID, time.Second)
				_, _ = d.c.Wait(ctx, r.ID, 10*time.Second)
			}
		}
	}
	_ = d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("daemon exited: %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = d.cmd.Process.Kill()
		t.Errorf("daemon did not exit on SIGTERM")
	}
}

// agent is one MCP client session on its own server, as one agent's
// `runbox mcp` would be.
type agent struct {
	t        testing.TB
	cs       *mcpsdk.ClientSession
	mu       sync.Mutex
	progress []*mcpsdk.ProgressNotificationParams
}

func newAgent(t testing.TB, d *testDaemon, workdir string) *agent {
	t.Helper()
	a := &agent{t: t}
	srv := New(d.c, Options{Version: "test", Workdir: workdir, ProgressInterval: 100 * time.Millisecond, StopWait: 20 * time.Second})
	cl := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "test-agent", Version: "1"}, &mcpsdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *mcpsdk.ProgressNotificationClientRequest) {
			a.mu.Lock()
			a.progress = append(a.progress, r.Params)
			a.mu.Unlock()
		},
	})
	st, ct := mcpsdk.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := cl.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); ss.Wait() })
	a.cs = cs
	return a
}

// call calls a tool; the result must be a tool result, error or not.
func (a *agent) call(name string, args map[string]any) *mcpsdk.CallToolResult {
	a.t.Helper()
	return a.callParams(&mcpsdk.CallToolParams{Name: name, Arguments: args})
}

func (a *agent) callParams(p *mcpsdk.CallToolParams) *mcpsdk.CallToolResult {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := a.cs.CallTool(ctx, p)
	if err != nil {
		a.t.Fatalf("%s: protocol error %v", p.Name, err)
	}
	return res
}

// ok calls a tool that must succeed and decodes its structured output
// into out; it returns the text summary.
func (a *agent) ok(name string, args map[string]any, out any) string {
	a.t.Helper()
	res := a.call(name, args)
	text := resultText(res)
	if res.IsError {
		a.t.Fatalf("%s(%v): tool error: %s", name, args, text)
	}
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		a.t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		a.t.Fatalf("%s: structured output %s: %v", name, b, err)
	}
	return text
}

// fails calls a tool that must answer with a tool error; it returns the
// message.
func (a *agent) fails(name string, args map[string]any) string {
	a.t.Helper()
	res := a.call(name, args)
	if !res.IsError {
		a.t.Fatalf("%s(%v) succeeded, want a tool error: %s", name, args, resultText(res))
	}
	return resultText(res)
}

func resultText(res *mcpsdk.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcpsdk.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}

// runTo plans and starts a command, returning the run id.
func (a *agent) start(cmd any, extra map[string]any) string {
	a.t.Helper()
	args := map[string]any{"backend": "local", "command": cmd}
	for k, v := range extra {
		args[k] = v
	}
	var p planOut
	a.ok("compute_plan", args, &p)
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
	return e.RunID
}

// waitDone waits for the run to end through local_wait.
func (a *agent) waitDone(id string) runOut {
	a.t.Helper()
	var r runOut
	a.ok("local_wait", map[string]any{"run_id": id, "timeout_seconds": 60}, &r)
	if !r.Done || !api.State(r.State).Terminal() {
		a.t.Fatalf("run %s still %s after local_wait(60)", id, r.State)
	}
	return r
}

func writeFile(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}
