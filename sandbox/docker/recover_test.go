package docker

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
	"github.com/runbox/runbox/sandbox/runlog"
)

// startInHelper starts spec from a child process (the test binary
// re-executed, see TestMain) and returns it once the run has started.
func startInHelper(t *testing.T, spec sandbox.Spec) *exec.Cmd {
	t.Helper()
	b, _ := json.Marshal(spec)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+string(b), "RUNBOX_TEST_INIT="+dockertest.RunboxBinary(t))
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatalf("helper did not start the run: %v", err)
	}
	return cmd
}

// waitFor polls cond (a log or container condition that no event signals).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func logBytes(path string, s runlog.Stream) int64 {
	sum, err := runlog.Scan(path)
	if err != nil {
		return 0
	}
	return sum.Bytes[s]
}

// recoverScript prints numbered lines, split lines and stderr in bursts,
// so a kill lands mid-output; want* is what it prints.
const recoverScript = `for i in $(seq 1 30); do seq $((i*1000)) $((i*1000+299)); head -c 20000 /dev/zero | tr '\0' a; echo; echo "err $i" >&2; sleep 0.1; done; head -c 17000 /dev/zero | tr '\0' z`

func recoverWant() (stdout, stderr string) {
	var o, e strings.Builder
	for i := 1; i <= 30; i++ {
		for n := i * 1000; n <= i*1000+299; n++ {
			fmt.Fprintln(&o, n)
		}
		o.WriteString(strings.Repeat("a", 20000) + "\n")
		fmt.Fprintf(&e, "err %d\n", i)
	}
	o.WriteString(strings.Repeat("z", 17000))
	return o.String(), e.String()
}

func TestRecoverAfterKill(t *testing.T) {
	e := setup(t)
	wantOut, wantErr := recoverWant()
	for _, tc := range []struct {
		name      string
		afterExit bool // recover only once the container has finished
	}{{"while-running", false}, {"after-exit", true}} {
		t.Run(tc.name, func(t *testing.T) {
			spec := e.newSpec(t, "sh", "-c", recoverScript)
			spec.Image = e.image
			spec.Setup = []string{"echo prepared"}
			helper := startInHelper(t, spec)
			waitFor(t, "output in the log", func() bool { return logBytes(spec.LogPath, runlog.Stdout) > 100_000 })
			helper.Process.Kill() // SIGKILL mid-output
			helper.Wait()
			if tc.afterExit {
				waitFor(t, "the container to exit", func() bool {
					c, err := e.cli.ContainerInspect(context.Background(), containerName(spec.RunID))
					return cerrdefs.IsNotFound(err) || err == nil && !c.State.Running // Docker auto-removes it
				})
			} else if n := logBytes(spec.LogPath, runlog.Stdout); n >= int64(len(wantOut)) {
				t.Fatalf("helper copied everything (%d bytes) before it was killed", n)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			h, err := New(testOptions(t)).Recover(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := h.Wait(ctx)
			if err != nil || ex.Code != 0 || ex.Lost {
				t.Fatalf("exit %+v, %v", ex, err)
			}
			out := streams(t, spec.LogPath)
			if got := string(out[runlog.Stdout]); got != wantOut {
				t.Errorf("stdout: %d bytes, want %d; first difference at %d", len(got), len(wantOut), firstDiff([]byte(got), []byte(wantOut)))
			}
			if got := string(out[runlog.Stderr]); got != wantErr {
				t.Errorf("stderr %q, want %q", got, wantErr)
			}
			if got := string(out[runlog.SetupStdout]); got != "prepared\n" {
				t.Errorf("setup stdout %q", got)
			}
			if cs := e.containers(t, spec.RunID); len(cs) != 0 {
				t.Error("container not removed after recovery")
			}
			// A later recovery sees the recorded exit, not a new run.
			h2, err := New(testOptions(t)).Recover(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			if ex2, _ := h2.Wait(ctx); ex2.Code != ex.Code || !ex2.EndedAt.Equal(ex.EndedAt) {
				t.Errorf("second recover: %+v, want %+v", ex2, ex)
			}
		})
	}
}

// TestRecoverDuringSetup kills the daemon while a setup command runs:
// the container's init owns setup as well, so the run goes on without
// the daemon and the next one finds it finished whole.
func TestRecoverDuringSetup(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "echo main ran > ran; echo main")
	spec.Image = e.image
	spec.Setup = []string{"echo setting up; sleep 2"}
	helper := startInHelper(t, spec)
	waitFor(t, "setup output", func() bool { return logBytes(spec.LogPath, runlog.SetupStdout) > 0 })
	helper.Process.Kill()
	helper.Wait()
	ctx := context.Background()
	h, err := New(testOptions(t)).Recover(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	ex, _ := h.Wait(ctx)
	if ex.Code != 0 || ex.Lost || ex.Error != "" {
		t.Errorf("exit %+v, want success", ex)
	}
	out := streams(t, spec.LogPath)
	if string(out[runlog.SetupStdout]) != "setting up\n" || string(out[runlog.Stdout]) != "main\n" {
		t.Errorf("setup %q, stdout %q", out[runlog.SetupStdout], out[runlog.Stdout])
	}
	if _, err := os.Stat(spec.Workdir + "/ran"); err != nil {
		t.Error("main command did not run after setup")
	}
}

func TestRecoverNotFound(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "true")
	_, err := e.sb.Recover(context.Background(), spec)
	if !errors.Is(err, sandbox.ErrNotFound) {
		t.Fatalf("err = %v, want ErrNotFound", err)
	}
}

func TestSweep(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	var ids []string
	var hs []sandbox.Handle
	for range 2 {
		spec := e.newSpec(t, "sleep", "60")
		h, err := e.sb.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		ids, hs = append(ids, spec.RunID), append(hs, h)
	}
	// A run of another home on the same Docker daemon: not ours to sweep,
	// though this home does not know it.
	oo := testOptions(t)
	oo.DefaultImage, oo.Home = e.image, testHome+" (another)"
	other := New(oo)
	t.Cleanup(func() { other.Close() })
	theirs := e.newSpec(t, "sleep", "60")
	th, err := other.Start(ctx, theirs)
	if err != nil {
		t.Fatal(err)
	}
	hs = append(hs, th)
	// Every run ends before the temp dirs go (cleanups run last first): a
	// handle still writing its state dir would race their removal.
	t.Cleanup(func() {
		for _, h := range hs {
			wctx, cancel := context.WithTimeout(ctx, time.Minute)
			_ = h.Stop(wctx, time.Second)
			_, _ = h.Wait(wctx)
			cancel()
		}
	})
	// Only the second run counts as an orphan; everything else on this
	// daemon (other tests' runs included) is "known" and must stay.
	n, err := e.sb.Sweep(ctx, func(id string) bool { return id != ids[1] && id != theirs.RunID })
	if err != nil || n != 1 {
		t.Fatalf("sweep = %d, %v; want 1", n, err)
	}
	if len(e.containers(t, ids[0])) != 1 || len(e.containers(t, ids[1])) != 0 {
		t.Error("sweep removed the wrong container")
	}
	if len(e.containers(t, theirs.RunID)) != 1 {
		t.Error("sweep removed another home's container")
	}
}
