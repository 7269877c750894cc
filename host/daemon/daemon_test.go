package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
)

// These tests drive the daemon's handlers through its real socket with the
// real client: a real Pebble store and real process runs, supervised by
// this test binary re-executed as "__supervise". No plugins are loaded
// (the engine runs without a judge); plugin answers are tested where the
// plugins are.
func TestMain(m *testing.M) { supervisortest.Main(m) }

type testDaemon struct {
	c      *client.Client
	socket string
	home   string
}

func startDaemon(t *testing.T) *testDaemon {
	t.Helper()
	d, stop := serveDaemon(t, t.TempDir(), nil)
	t.Cleanup(stop)
	return d
}

// serveDaemon runs a daemon on home (a store may be there already), with
// judge's plugins when judge is not nil, and returns once it answers; stop
// ends it (its runs go on: their supervisors own them) and may be called
// more than once.
func serveDaemon(t *testing.T, home string, judge host.Judge) (*testDaemon, func()) {
	t.Helper()
	// A short socket path: unix sockets allow ~104 bytes.
	sockDir, err := os.MkdirTemp("", "rbd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "s")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Home: home, Socket: socket, Version: "test", MaxParallel: 4, Judge: judge,
			Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
			Sandboxes: map[string]sandbox.Sandbox{
				sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{"__supervise"}}),
			},
		})
	}()
	stopped := false
	stop := func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	}
	t.Cleanup(stop)
	c := client.New(client.Options{Home: home, Socket: socket})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := c.Health(context.Background()); err == nil {
			return &testDaemon{c: c, socket: socket, home: home}, stop
		} else if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer: %v", err)
		}
		select {
		case err := <-done:
			t.Fatalf("daemon exited: %v", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func (d *testDaemon) run(t *testing.T, cmd ...string) *api.Run {
	t.Helper()
	r, err := d.c.Submit(context.Background(), api.RunRequest{
		Command: cmd, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (d *testDaemon) wait(t *testing.T, id string) *api.Run {
	t.Helper()
	r, err := d.c.Wait(context.Background(), id, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !r.State.Terminal() {
		t.Fatalf("run %s still %s", id, r.State)
	}
	return r
}

// raw sends a request as any HTTP client could, for the answers the typed
// client never provokes.
func (d *testDaemon) raw(t *testing.T, method, path, body string) (int, api.Error) {
	t.Helper()
	hc := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var dd net.Dialer
			return dd.DialContext(ctx, "unix", d.socket)
		},
	}}
	req, err := http.NewRequest(method, "http://runbox"+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var e api.Error
	if resp.StatusCode/100 != 2 {
		if err := json.Unmarshal(b, &e); err != nil {
			t.Fatalf("%s %s: %d with a body that is not an api.Error: %q", method, path, resp.StatusCode, b)
		}
	}
	return resp.StatusCode, e
}

func TestHealthAndBackends(t *testing.T) {
	d := startDaemon(t)
	h, err := d.c.Health(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if h.Version != "test" || h.PID != os.Getpid() || h.Home != d.home {
		t.Errorf("health %+v", h)
	}
	b, err := d.c.Backends(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Backends) != 1 || b.Backends[0].Name != sandbox.Process || !b.Backends[0].Available {
		t.Errorf("backends %+v", b.Backends)
	}
	if b.Default != sandbox.Process || b.Reason == "" {
		t.Errorf("auto picks %q (%q), want process with a reason", b.Default, b.Reason)
	}
}

// A run goes through the API as the CLI sees it: created, waited on,
// its output streamed, its events listed, retried with lineage.
func TestRunLifecycleOverTheAPI(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	r := d.run(t, "sh", "-c", "echo out; echo err >&2; exit 3")
	if r.ID == "" || r.Attempt != 1 || r.Spec.Command[0] != "sh" {
		t.Fatalf("created run %+v", r)
	}
	end := d.wait(t, r.ID)
	if end.State != api.Failed || end.Exit == nil || end.Exit.Code != 3 {
		t.Fatalf("ended %s exit %+v, want failed with code 3", end.State, end.Exit)
	}
	// A unique prefix is as good as the id.
	got, err := d.c.Get(ctx, r.ID[:len(r.ID)-4])
	if err != nil || got.ID != r.ID {
		t.Fatalf("get by prefix: %v %v", got, err)
	}
	var out, errOut bytes.Buffer
	err = d.c.Logs(ctx, r.ID, nil, func(f client.Frame) error {
		switch client.Stream(f.Stream) {
		case client.Stdout:
			out.Write(f.Data)
		case client.Stderr:
			errOut.Write(f.Data)
		}
		return nil
	})
	if err != nil || out.String() != "out\n" || errOut.String() != "err\n" {
		t.Errorf("logs: stdout %q stderr %q err %v", out.String(), errOut.String(), err)
	}
	evs, err := d.c.Events(ctx, r.ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	var states []string
	for _, ev := range evs {
		if ev.Type == "state" {
			states = append(states, string(ev.State))
		}
	}
	if strings.Join(states, ",") != "queued,preparing,running,failed" {
		t.Errorf("states %v", states)
	}
	retry, err := d.c.Retry(ctx, r.ID, api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if retry.ParentRunID != r.ID || retry.Attempt != 2 {
		t.Errorf("retry parent %q attempt %d, want %q and 2", retry.ParentRunID, retry.Attempt, r.ID)
	}
	d.wait(t, retry.ID)
	children, err := d.c.List(ctx, url.Values{"parent": {r.ID[:len(r.ID)-6]}})
	if err != nil || len(children) != 1 || children[0].ID != retry.ID {
		t.Errorf("list by parent: %v %v", children, err)
	}
}

func TestAttachStreamsOutputThenTheEnd(t *testing.T) {
	d := startDaemon(t)
	var first *api.Run
	var out bytes.Buffer
	final, err := d.c.Attach(context.Background(), api.RunRequest{
		Command: []string{"sh", "-c", "echo one; echo two"}, Sandbox: sandbox.Process, Workdir: t.TempDir(),
	}, func(f client.Frame) error {
		switch f.Stream {
		case api.StreamRun:
			first = &api.Run{}
			return json.Unmarshal(f.Data, first)
		case uint8(client.Stdout):
			out.Write(f.Data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var end api.Run
	if err := json.Unmarshal(final, &end); err != nil {
		t.Fatal(err)
	}
	if first == nil || first.ID != end.ID || end.State != api.Succeeded || out.String() != "one\ntwo\n" {
		t.Errorf("first %+v, end %s %s, out %q", first, end.ID, end.State, out.String())
	}
}

func TestStopAndWaitTimeout(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	r := d.run(t, "sleep", "60")
	// A wait that times out answers with the run as it is, not an error.
	w, err := d.c.Wait(ctx, r.ID, 50*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if w.State.Terminal() {
		t.Fatalf("sleep 60 ended after 50ms: %s", w.State)
	}
	if _, err := d.c.Stop(ctx, r.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	if end := d.wait(t, r.ID); end.State != api.Cancelled {
		t.Errorf("stopped run ended %s (%s)", end.State, end.Reason)
	}
	// Stopping a run that has ended is not an error: the answer says how it ended.
	again, err := d.c.Stop(ctx, r.ID, time.Second)
	if err != nil || again.State != api.Cancelled {
		t.Errorf("second stop: %v %v", again, err)
	}
}

// Every call that names a run or plan answers not_found for one that does
// not exist, with a message that names it.
func TestUnknownIDs(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	const id = "01NOSUCHRUN"
	calls := map[string]func() error{
		"get":    func() error { _, err := d.c.Get(ctx, id); return err },
		"stop":   func() error { _, err := d.c.Stop(ctx, id, 0); return err },
		"wait":   func() error { _, err := d.c.Wait(ctx, id, time.Second); return err },
		"retry":  func() error { _, err := d.c.Retry(ctx, id, api.RunRequest{}); return err },
		"events": func() error { _, err := d.c.Events(ctx, id, 0); return err },
		"logs":   func() error { return d.c.Logs(ctx, id, nil, func(client.Frame) error { return nil }) },
		"plan":   func() error { _, err := d.c.GetPlan(ctx, id); return err },
	}
	for name, call := range calls {
		t.Run(name, func(t *testing.T) {
			err := call()
			if !client.IsNotFound(err) {
				t.Fatalf("error %v, want not_found", err)
			}
			if !strings.Contains(err.Error(), id) && !strings.Contains(strings.ToLower(err.Error()), "no run") && !strings.Contains(strings.ToLower(err.Error()), "not found") {
				t.Errorf("message %q says nothing of what was not found", err)
			}
		})
	}
}

func TestAmbiguousPrefix(t *testing.T) {
	d := startDaemon(t)
	a, b := d.run(t, "true"), d.run(t, "true")
	d.wait(t, a.ID)
	d.wait(t, b.ID)
	n := 0
	for n < len(a.ID) && a.ID[n] == b.ID[n] {
		n++
	}
	if n == 0 {
		t.Skip("the two ids share no prefix")
	}
	_, err := d.c.Get(context.Background(), a.ID[:n])
	var e *client.Error
	if !errors.As(err, &e) || e.Code != api.CodeAmbiguous || e.Status != http.StatusConflict {
		t.Errorf("prefix %q of two runs: %v, want ambiguous (409)", a.ID[:n], err)
	}
}

// Bad requests are 400 bad_request with a message, and change nothing.
func TestBadRequests(t *testing.T) {
	d := startDaemon(t)
	r := d.run(t, "true")
	d.wait(t, r.ID)
	tests := []struct {
		method, path, body string
		want               string // in the message
	}{
		{"POST", "/v1/runs", `{"command": ["true"], "no_such_field": 1}`, "no_such_field"},
		{"POST", "/v1/runs", `{"command": `, "bad request body"},
		{"POST", "/v1/runs", `{"command": [], "sandbox": "process"}`, "command"},
		{"GET", "/v1/runs?state=sleeping", "", "sleeping"},
		{"GET", "/v1/runs?limit=-1", "", "limit"},
		{"GET", "/v1/runs?since=yesterday", "", "since"},
		{"POST", "/v1/runs/" + r.ID + "/stop?grace=soon", "", "grace"},
		{"GET", "/v1/runs/" + r.ID + "/wait?timeout=soon", "", "timeout"},
		{"GET", "/v1/runs/" + r.ID + "/logs?stream=stdin", "", "stdin"},
		{"POST", "/v1/plans", `{"command": ["true"], "timeout": "forever"}`, "forever"},
		{"POST", "/v1/runs", `{"command": ["true"], "timeout": "-5s"}`, "timeout -5s is negative"},
		{"POST", "/v1/runs", `{"command": ["true"], "grace": "-1s"}`, "grace"},
		{"POST", "/v1/runs", `{"command": ["true"], "stall_timeout": "-1s"}`, "stall_timeout"},
		{"POST", "/v1/runs", `{"command": ["true"], "limits": {"pids": -3}}`, "pids"},
		{"POST", "/v1/runs", `{"command": ["true"], "limits": {"cpus": -2}}`, "cpus"},
		{"POST", "/v1/runs", `{"command": ["true"], "limits": {"memory_bytes": -1}}`, "memory"},
		{"POST", "/v1/plans", `{"command": ["true"], "limits": {"pids": -3}}`, "pids"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s", tt.method, tt.path), func(t *testing.T) {
			code, e := d.raw(t, tt.method, tt.path, tt.body)
			if code != http.StatusBadRequest || e.Code != api.CodeBadRequest {
				t.Fatalf("answer %d %q, want 400 bad_request", code, e.Code)
			}
			if !strings.Contains(e.Error, tt.want) {
				t.Errorf("message %q does not mention %q", e.Error, tt.want)
			}
		})
	}
	runs, err := d.c.List(context.Background(), nil)
	if err != nil || len(runs) != 1 {
		t.Errorf("after bad requests: %d runs, %v; want only the first", len(runs), err)
	}
}

func TestPlanOverTheAPI(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	p, err := d.c.Plan(ctx, api.RunRequest{Command: []string{"echo", "hi"}, Workdir: t.TempDir(), Sandbox: sandbox.Process})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID == "" || p.Sandbox != sandbox.Process || strings.Join(p.Command, " ") != "echo hi" {
		t.Fatalf("plan %+v", p)
	}
	again, err := d.c.GetPlan(ctx, p.ID)
	if err != nil || again.ID != p.ID {
		t.Fatalf("get plan: %v %v", again, err)
	}
	r, err := d.c.Submit(ctx, api.RunRequest{PlanID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	if end := d.wait(t, r.ID); end.State != api.Succeeded || end.PlanID != p.ID {
		t.Errorf("run of plan: %s plan %q", end.State, end.PlanID)
	}
}

// A client whose daemon is gone says so, and does not hang.
func TestNoDaemon(t *testing.T) {
	dir, err := os.MkdirTemp("", "rbn")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	c := client.New(client.Options{Home: dir, Socket: filepath.Join(dir, "s")})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.Health(ctx)
	if !errors.Is(err, client.ErrNoDaemon) {
		t.Errorf("error %v, want ErrNoDaemon", err)
	}
}

// The same submission sent twice (its first answer was lost) creates one
// run: the second answer is the run the first created.
func TestIdempotentSubmit(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	req := api.RunRequest{Command: []string{"true"}, Sandbox: sandbox.Process, Workdir: t.TempDir(), IdempotencyKey: "k-1"}
	a, err := d.c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := d.c.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if a.ID != b.ID {
		t.Errorf("same key, two runs: %s and %s", a.ID, b.ID)
	}
	d.wait(t, a.ID)
	req.IdempotencyKey = "k-2"
	c, err := d.c.Submit(ctx, req)
	if err != nil || c.ID == a.ID {
		t.Fatalf("another key: %v %v", c, err)
	}
	d.wait(t, c.ID)
	runs, err := d.c.List(ctx, nil)
	if err != nil || len(runs) != 2 {
		t.Errorf("%d runs (%v), want 2", len(runs), err)
	}
}

// A run whose supervisor vanished is lost, and its exit is unknown: the
// answer has no exit status rather than a made-up 0.
func TestLostRunHasNoExitStatus(t *testing.T) {
	d := startDaemon(t)
	r := d.run(t, "sleep", "3")
	var pid int
	deadline := time.Now().Add(10 * time.Second)
	for pid == 0 && time.Now().Before(deadline) {
		cur, err := d.c.Get(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if cur.State == api.Running && cur.Ref != "" {
			fmt.Sscan(cur.Ref, &pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if pid <= 0 {
		t.Fatal("no supervisor pid in the run's ref")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	end := d.wait(t, r.ID)
	if end.State != api.Lost || end.Exit != nil {
		t.Errorf("state %s exit %+v, want lost with no exit", end.State, end.Exit)
	}
}
