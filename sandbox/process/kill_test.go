package process_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/runlog"
)

// treeScript starts a tree that tries every way to outlive its run: a
// background child, an orphaned grandchild (its parent exits), one in its
// own session (setsid), and a foreground shell that ignores SIGTERM. Each
// records its pid in pids; it prints "up" once all four have. pids is
// created first: a wait loop reading a missing file would end at once.
const treeScript = `
: > pids
sh -c 'echo $$ >> pids; exec sleep 1000' &
(sh -c 'echo $$ >> pids; exec sleep 1000' &) 
setsid sh -c 'echo $$ >> pids; exec sleep 1000' &
sh -c 'trap "" TERM; echo $$ >> pids; while :; do sleep 1; done' &
while [ "$(wc -l < pids)" -lt 4 ]; do sleep 0.01; done
echo up
wait
`

func treeSpec(t *testing.T) sandbox.Spec {
	spec := shSpec(t, treeScript)
	spec.Grace = 300 * time.Millisecond
	return spec
}

// waitUp waits until the tree script has printed "up".
func waitUp(t *testing.T, spec sandbox.Spec) {
	waitFor(t, "the process tree", func() bool {
		return bytes.Contains(streams(t, spec.LogPath)[runlog.Stdout], []byte("up"))
	})
}

func assertTreeGone(t *testing.T, spec sandbox.Spec) {
	t.Helper()
	pids := readPids(t, filepath.Join(spec.Workdir, "pids"))
	if len(pids) < 4 {
		t.Fatalf("only %d pids recorded", len(pids))
	}
	for _, p := range pids {
		if alive(p) {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("pid %d outlived the run", p)
		}
	}
}

func TestTimeoutKillsTree(t *testing.T) {
	spec := treeSpec(t)
	spec.Timeout = 700 * time.Millisecond
	e, out := run(t, spec)
	if !e.TimedOut || e.Cancelled || e.Code != 128+int(syscall.SIGTERM) {
		t.Fatalf("exit %+v, want timed out by SIGTERM", e)
	}
	meta := string(out[runlog.Meta])
	for _, want := range []string{"timed out after 700ms: sent SIGTERM to process group", "sent SIGKILL"} {
		if !strings.Contains(meta, want) {
			t.Errorf("meta %q lacks %q", meta, want)
		}
	}
	assertTreeGone(t, spec)
}

func TestTimeoutDuringSetup(t *testing.T) {
	spec := shSpec(t, "echo main")
	spec.Setup = []string{"sleep 1000"}
	spec.Timeout = 200 * time.Millisecond
	e, out := run(t, spec)
	if !e.TimedOut || e.SetupFailed || len(out[runlog.Stdout]) > 0 {
		t.Fatalf("exit %+v, stdout %q", e, out[runlog.Stdout])
	}
}

func TestLeftoversEndWithTheRun(t *testing.T) {
	// The main command exits at once; its background children hold stdout open.
	spec := shSpec(t, `: > pids; sh -c 'echo $$ >> pids; exec sleep 1000' & setsid sh -c 'echo $$ >> pids; exec sleep 1000' &
while [ "$(wc -l < pids)" -lt 2 ]; do sleep 0.01; done; echo done`)
	e, out := run(t, spec)
	if e.Code != 0 || string(out[runlog.Stdout]) != "done\n" {
		t.Fatalf("exit %+v, stdout %q", e, out[runlog.Stdout])
	}
	for _, p := range readPids(t, filepath.Join(spec.Workdir, "pids")) {
		if alive(p) {
			syscall.Kill(p, syscall.SIGKILL)
			t.Errorf("leftover pid %d alive", p)
		}
	}
}

func TestStop(t *testing.T) {
	sb := newSandbox(process.Options{})
	tests := []struct {
		name    string
		recover bool
	}{{"original handle", false}, {"recovered handle", true}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := treeSpec(t)
			h := start(t, sb, spec)
			waitUp(t, spec)
			stopper := h
			if tt.recover {
				var err error
				if stopper, err = sb.Recover(context.Background(), spec); err != nil {
					t.Fatal(err)
				}
				if stopper.Ref() != h.Ref() {
					t.Fatalf("recovered ref %s, want %s", stopper.Ref(), h.Ref())
				}
			}
			st, err := stopper.Stats(context.Background())
			if err != nil || st.Pids < 5 || st.RSSBytes == 0 {
				t.Fatalf("stats %+v, %v", st, err)
			}
			if err := stopper.Stop(context.Background(), 200*time.Millisecond); err != nil {
				t.Fatal(err)
			}
			for _, hh := range []sandbox.Handle{stopper, h} {
				if e := wait(t, hh); !e.Cancelled || e.TimedOut {
					t.Fatalf("exit %+v, want cancelled", e)
				}
			}
			if !strings.Contains(string(streams(t, spec.LogPath)[runlog.Meta]), "grace 200ms") {
				t.Error("stop's grace not used")
			}
			assertTreeGone(t, spec)
		})
	}
}

func TestSupervisorKilledIsLost(t *testing.T) {
	sb := newSandbox(process.Options{})
	spec := shSpec(t, "echo $$ > pid; exec sleep 1000")
	h := start(t, sb, spec)
	pidFile := filepath.Join(spec.Workdir, "pid")
	waitFor(t, "the child", func() bool { return len(readPids(t, pidFile)) == 1 })
	sup, _ := strconv.Atoi(h.Ref())
	if err := syscall.Kill(sup, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	e := wait(t, h)
	want := "supervisor pid " + h.Ref() + " vanished without an exit record"
	if !e.Lost || !strings.HasPrefix(e.Error, want) {
		t.Fatalf("exit %+v, want lost", e)
	}
	rh, err := sb.Recover(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if e := wait(t, rh); !e.Lost || !strings.HasPrefix(e.Error, want) {
		t.Fatalf("recovered exit %+v, want %q", e, want)
	}
	// Nobody supervises the child any more: it must not run on unwatched.
	child := readPids(t, pidFile)[0]
	waitFor(t, "the orphaned child to die", func() bool { return !alive(child) })
}

// TestStarterKilled is the daemon dying mid-run: a helper process starts
// the run and is SIGKILLed; the run goes on, and a Recover from here
// sees it complete with every byte in the log. The run's supervisor is a
// freshly started one, or a standby that served a run before (recycled):
// that one must exit after the run, since no daemon will hand it another.
func TestStarterKilled(t *testing.T) {
	for _, mode := range []string{"fresh", "recycled"} {
		t.Run(mode, func(t *testing.T) { testStarterKilled(t, mode) })
	}
}

func testStarterKilled(t *testing.T, mode string) {
	spec := newSpec(t, "python3", "-c", `
import os, sys, time
out = sys.stdout.buffer
with open("expected", "wb") as f:
    for part in range(2):
        for i in range(64):
            b = os.urandom(65536 + i)
            out.write(b); f.write(b)
        out.flush(); f.flush()
        if part == 0:
            with open("half", "w"): pass
            while not os.path.exists("go"):
                time.sleep(0.01)
`)
	b, _ := json.Marshal(spec)
	helper := exec.Command(os.Args[0], "__start_helper", string(b), mode)
	stdout, _ := helper.StdoutPipe()
	helper.Stderr = os.Stderr
	if err := helper.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "started ") {
		t.Fatalf("helper said %q, %v", line, err)
	}
	waitFor(t, "half the output", func() bool { return exists(filepath.Join(spec.Workdir, "half")) })
	killAndReap(t, helper)

	h, err := newSandbox(process.Options{}).Recover(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if h.Ref() != strings.TrimSpace(strings.TrimPrefix(line, "started ")) {
		t.Fatalf("recovered ref %s, helper said %q", h.Ref(), line)
	}
	os.WriteFile(filepath.Join(spec.Workdir, "go"), nil, 0o600)
	if e := wait(t, h); e.Code != 0 || e.Lost {
		t.Fatalf("exit %+v", e)
	}
	want, _ := os.ReadFile(filepath.Join(spec.Workdir, "expected"))
	got := streams(t, spec.LogPath)[runlog.Stdout]
	if len(want) == 0 || !bytes.Equal(got, want) {
		t.Fatalf("log stdout (%d bytes) differs from what the child wrote (%d bytes)", len(got), len(want))
	}
	pid, _ := strconv.Atoi(h.Ref())
	waitFor(t, "the supervisor to exit after its run", func() bool { return !alive(pid) })
}
