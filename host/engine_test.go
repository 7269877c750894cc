package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
	"github.com/runbox/runbox/store"
)

// These tests drive a real engine: a real Pebble store and real process
// runs, supervised by this test binary re-executed as "__supervise".
func TestMain(m *testing.M) {
	supervisortest.Main(m)
}

type testEngine struct {
	*Engine
	home string
	st   *store.Store
}

func newTestEngine(t *testing.T, home string, maxParallel int) *testEngine {
	t.Helper()
	st, err := store.Open(filepath.Join(home, "store"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{
		Home:        home,
		Store:       st,
		MaxParallel: maxParallel,
		Sandboxes: map[string]sandbox.Sandbox{
			sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{"__supervise"}}),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	te := &testEngine{Engine: e, home: home, st: st}
	t.Cleanup(te.close)
	return te
}

func (te *testEngine) close() {
	if te.Engine != nil {
		te.die()
		te.supervisorsDone()
	}
}

// die closes the engine and its store as a daemon that goes away does,
// its runs left to their supervisors; close also waits for those to end.
func (te *testEngine) die() {
	te.Engine.Close()
	te.st.Close()
	te.Engine = nil
}

// supervisorsDone waits (up to 10 s) until every run's exit record is in
// place: a supervisor tells the engine its record before the record's
// rename (the two overlap, see writeRecord), so a run the engine has
// finished may still be writing its state directory, which the test's
// temp dir cleanup would then find not empty.
func (te *testEngine) supervisorsDone() {
	dirs, _ := filepath.Glob(filepath.Join(te.home, "runs", "*", "sandbox"))
	deadline := time.Now().Add(10 * time.Second)
	for _, d := range dirs {
		for time.Now().Before(deadline) {
			// exit.json.tmp is the record's reserve, renamed into place
			// last; the tree record's twin stays (jsonfile.Replace).
			_, noTmp := os.Stat(filepath.Join(d, "exit.json.tmp"))
			spec, _ := os.ReadFile(filepath.Join(d, "spec.json"))
			_, noExit := os.Stat(filepath.Join(d, "exit.json"))
			if noTmp != nil && (len(spec) == 0 || noExit == nil) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func (te *testEngine) wait(t *testing.T, id string) *store.Run {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := te.Wait(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if !r.State.Terminal() {
		t.Fatalf("run %s still %s", id, r.State)
	}
	return r
}

func (te *testEngine) states(t *testing.T, id string) []store.State {
	t.Helper()
	evs, err := te.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var out []store.State
	for _, ev := range evs {
		if ev.Type == store.EventState {
			out = append(out, ev.State)
		}
	}
	return out
}

// preparingRun is what Submit writes of a process run that can start at
// once, before its runner starts the sandbox: its spec, built for req, and
// the run in preparing.
func (te *testEngine) preparingRun(t *testing.T, req api.RunRequest) (*store.Run, sandbox.Spec) {
	t.Helper()
	id := store.NewID()
	spec, err := te.buildSpec(id, sandbox.Capabilities{}, req)
	if err != nil {
		t.Fatal(err)
	}
	run := &store.Run{ID: id, State: store.Preparing, Reason: "preparing", Sandbox: sandbox.Process, Spec: storedSpec(spec, req), CreatedAt: time.Now()}
	if err := te.st.CreateRun(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	return run, spec
}

func processRequest(t *testing.T, cmd ...string) api.RunRequest {
	return api.RunRequest{Command: cmd, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ()}
}

func sameStates(a, b []store.State) bool {
	return strings.Join(stateNames(a), ",") == strings.Join(stateNames(b), ",")
}

func stateNames(ss []store.State) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// A run with a free slot is created in preparing, and one behind a full
// queue waits in queued; both histories tell the whole lifecycle.
func TestLifecycleWithAndWithoutAFreeSlot(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 1)
	ctx := context.Background()
	first, err := te.Submit(ctx, processRequest(t, "sleep", "0.3"))
	if err != nil {
		t.Fatal(err)
	}
	if first.State != store.Preparing {
		t.Errorf("first run created %s, want preparing (a slot was free)", first.State)
	}
	second, err := te.Submit(ctx, processRequest(t, "true"))
	if err != nil {
		t.Fatal(err)
	}
	if second.State != store.Queued {
		t.Errorf("second run created %s, want queued (the only slot is taken)", second.State)
	}
	want := []store.State{store.Queued, store.Preparing, store.Running, store.Succeeded}
	for _, id := range []string{first.ID, second.ID} {
		if r := te.wait(t, id); r.State != store.Succeeded {
			t.Fatalf("run %s ended %s (%s)", id, r.State, r.Reason)
		}
		if got := te.states(t, id); !sameStates(got, want) {
			t.Errorf("run %s states %v, want %v", id, got, want)
		}
	}
}

// A daemon that died after creating a run in preparing but before starting
// it leaves the run's queued spec on disk; the next daemon starts the run
// instead of calling it lost.
func TestRecoverStartsAPreparedRunThatNeverStarted(t *testing.T) {
	home := t.TempDir()
	te := newTestEngine(t, home, 2)
	ctx := context.Background()
	req := processRequest(t, "sh", "-c", "echo recovered")
	run, spec := te.preparingRun(t, req)
	id := run.ID
	if err := savePending(te.runDir(id), &pendingRun{spec: spec}); err != nil {
		t.Fatal(err)
	}
	te.close()

	te2 := newTestEngine(t, home, 2)
	if err := te2.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	r := te2.wait(t, id)
	if r.State != store.Succeeded {
		t.Fatalf("recovered run ended %s (%s), want succeeded", r.State, r.Reason)
	}
	// The queued spec (its env may hold secrets) is emptied once the run
	// has started, and an empty one reads as none.
	if b, err := os.ReadFile(filepath.Join(te2.runDir(id), pendingFile)); err == nil && len(b) > 0 {
		t.Errorf("queued spec still on disk after the run started: %s", b)
	}
	if _, err := loadPending(te2.runDir(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("loadPending of a started run: %v, want ErrNotExist", err)
	}

	// Without the queued spec the run may have started: it is lost, with
	// the reason, rather than run twice.
	id2 := store.NewID()
	run2 := &store.Run{ID: id2, State: store.Preparing, Reason: "preparing", Sandbox: sandbox.Process, Spec: storedSpec(spec, req), CreatedAt: time.Now()}
	run2.Spec.RunID = id2
	run2.Spec.StateDir = filepath.Join(te2.runDir(id2), "sandbox")
	if err := te2.st.CreateRun(ctx, run2); err != nil {
		t.Fatal(err)
	}
	te2.close()
	te3 := newTestEngine(t, home, 2)
	if err := te3.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	r2, err := te3.Get(ctx, id2)
	if err != nil {
		t.Fatal(err)
	}
	if r2.State != store.Lost || !strings.Contains(r2.Reason, "never started") {
		t.Errorf("run without a queued spec: %s (%s), want lost, never started", r2.State, r2.Reason)
	}
}

// A request that names a backend this daemon has not got is refused with
// the reason the daemon registered for it (Config.Missing); one it has no
// reason for, or no such backend at all, with what is known.
func TestMissingBackendSaysWhy(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 1)
	te.cfg.Missing = map[string]string{sandbox.Slurm: "no sbatch on PATH (install slurm-client)"}
	for _, tc := range []struct{ sandbox, want string }{
		{sandbox.Slurm, "sandbox slurm is not available: no sbatch on PATH (install slurm-client)"},
		{sandbox.Docker, `sandbox "docker" is not available on this host`},
		{"nowhere", `unknown sandbox "nowhere"`},
	} {
		_, err := te.Submit(context.Background(), api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: tc.sandbox})
		if !errors.Is(err, ErrBadRequest) || (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("--sandbox %s: %v, want a bad request saying %q", tc.sandbox, err, tc.want)
		}
	}
}

// What only a container takes, sent with a backend that runs none, is
// refused (it was taken and ignored: a "read-only" run could write its
// root), for a run and for a plan, and creates no run. With no backend
// named, or auto, the same request runs: auto may pick a container, and
// says where it went and why when it does not.
func TestContainerOptionsNeedAContainer(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 1)
	ctx := context.Background()
	for _, tc := range []struct {
		req  api.RunRequest
		want string
	}{
		{api.RunRequest{ReadOnlyRoot: true}, "--read-only: only a container takes it; --sandbox process runs none: drop it, or use --sandbox docker"},
		{api.RunRequest{Image: "alpine", Pull: true}, "--image, --pull: only a container takes them"},
		{api.RunRequest{KeepContainer: true}, "--keep-container: only a container takes it"},
	} {
		tc.req.Command, tc.req.Workdir, tc.req.Sandbox = []string{"true"}, t.TempDir(), sandbox.Process
		if _, err := te.Submit(ctx, tc.req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("submit %+v: %v, want a bad request saying %q", tc.req, err, tc.want)
		}
		if _, err := te.Plan(ctx, tc.req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("plan %+v: %v, want a bad request saying %q", tc.req, err, tc.want)
		}
	}
	if runs, err := te.st.ListRuns(ctx, store.Filter{}); err != nil || len(runs) != 0 {
		t.Fatalf("refused requests left %d runs (%v)", len(runs), err)
	}
	for _, sb := range []string{"", sandbox.Auto} {
		r, err := te.Submit(ctx, api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: sb, Image: "alpine", ReadOnlyRoot: true})
		if err != nil {
			t.Fatalf("--sandbox %q with container options: %v", sb, err)
		}
		if r.Sandbox != sandbox.Process {
			t.Errorf("--sandbox %q went to %s, want process (the only backend here)", sb, r.Sandbox)
		}
		if r = te.wait(t, r.ID); r.State != store.Succeeded {
			t.Errorf("--sandbox %q: %s (%s), want succeeded", sb, r.State, r.Reason)
		}
	}
}

// A process run has this host's network unless its isolation cuts it:
// --network none ran with the whole network, and --network bridge with
// more than a container's. Both are refused, for a run and a plan, and
// say what gives the run no network; --network host (let an isolated
// run out) is taken.
func TestProcessRunRefusesAContainerNetwork(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 1)
	ctx := context.Background()
	for mode, want := range map[string]string{
		"none":   "--network none is a container's: a process run has this host's network unless --isolate cuts it; use --isolate net",
		"bridge": "--network bridge is a container network",
	} {
		req := api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: sandbox.Process, Network: mode}
		if _, err := te.Submit(ctx, req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), want) {
			t.Errorf("submit --network %s: %v, want a bad request saying %q", mode, err, want)
		}
		if _, err := te.Plan(ctx, req); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), want) {
			t.Errorf("plan --network %s: %v, want a bad request saying %q", mode, err, want)
		}
	}
	r, err := te.Submit(ctx, api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: sandbox.Process, Network: "host"})
	if err != nil {
		t.Fatalf("--network host: %v", err)
	}
	if r = te.wait(t, r.ID); r.State != store.Succeeded {
		t.Errorf("--network host: %s (%s)", r.State, r.Reason)
	}
}

// A queued run's spec on disk names the backend it was admitted to: a
// store that loses the run's record (daemon.FromDisk) gets it back from
// that file alone, and must not send a Slurm or Docker run to the process
// backend. Emptied once the run starts, it reads as none.
func TestQueuedSpecNamesItsBackend(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 2)
	ctx := context.Background()
	first, err := te.Submit(ctx, processRequest(t, "sh", "-c", "sleep 30"))
	if err != nil {
		t.Fatal(err)
	}
	req := processRequest(t, "echo", "queued")
	req.After = []string{first.ID}
	queued, err := te.Submit(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	spec, backend, err := QueuedSpec(te.runDir(queued.ID))
	if err != nil || backend != sandbox.Process || strings.Join(spec.Command, " ") != "echo queued" {
		t.Fatalf("QueuedSpec of a queued run: %q %q %v, want [echo queued] on %q", spec.Command, backend, err, sandbox.Process)
	}
	if _, err := te.Stop(ctx, first.ID, time.Second); err != nil {
		t.Fatal(err)
	}
	te.wait(t, first.ID)
	te.wait(t, queued.ID) // afterok: cancelled with its predecessor
	if _, _, err := QueuedSpec(te.runDir(first.ID)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("QueuedSpec of a started run: %v, want ErrNotExist", err)
	}
}
