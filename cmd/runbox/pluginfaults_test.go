package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// installTestPlugin builds plugins/testdata/NAME (a broken test plugin) and
// drops it into e's plugin directory, as a user installs one.
func (e *env) installTestPlugin(name string) {
	e.t.Helper()
	if _, err := exec.LookPath("go"); err != nil {
		e.t.Skip("needs the go toolchain to build a test plugin")
	}
	pdir := filepath.Join(e.home, "plugins")
	if err := os.MkdirAll(pdir, 0o700); err != nil {
		e.t.Fatal(err)
	}
	build := exec.Command("go", "build", "-buildmode=c-shared", "-trimpath", "-o", filepath.Join(pdir, name+".wasm"), "./"+name)
	build.Dir = filepath.Join("..", "..", "plugins", "testdata")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		e.t.Fatalf("build test plugin %s: %v\n%s", name, err, out)
	}
}

// daemonLog is what the daemon logged so far.
func (e *env) daemonLog() string {
	b, _ := os.ReadFile(filepath.Join(e.home, "daemon.log"))
	return string(b)
}

// gatedProgressScript prints steps 1..5 of 10, then step 5 again every
// 0.2 s until the file gate exists (so the progress plugins keep being
// called), then steps 6..10.
const gatedProgressScript = `i=1
while [ $i -le 5 ]; do echo "##PROGRESS## {\"step\": $i, \"total\": 10}"; i=$((i+1)); done
while [ ! -e gate ]; do echo "##PROGRESS## {\"step\": 5, \"total\": 10}"; sleep 0.2; done
while [ $i -le 10 ]; do echo "##PROGRESS## {\"step\": $i, \"total\": 10}"; i=$((i+1)); done
`

// pollUntil polls cond every 50 ms until it holds or a minute has passed
// (a bound for a stuck daemon, not a speed the test expects).
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
	}
}

func (e *env) startGatedRun() string {
	e.t.Helper()
	e.write("progress.sh", gatedProgressScript)
	return strings.TrimSpace(e.must("run", "-d", "--sandbox", "process", "--", "sh", "progress.sh"))
}

func (e *env) finishGatedRun(id string) *api.Run {
	e.t.Helper()
	e.write("gate", "")
	e.must("wait", id)
	return e.getRun(id)
}

// Fault: a user progress plugin whose parse never returns, in a real run -> progress shows while it is still called, and at the end; plugins ls shows it off, why, until when
func TestFaultHangingProgressPluginRun(t *testing.T) {
	e := newEnv(t)
	e.installTestPlugin("hang")
	id := e.startGatedRun()

	// The built-in's progress shows before the hanging plugin has timed
	// out often enough to be switched off: one plugin's calls never hold
	// up another's.
	var sawOn bool
	pollUntil(t, "progress in status", func() bool {
		if p := e.getRun(id).Progress; p != nil && p.Step == 5 {
			sawOn = !strings.Contains(e.daemonLog(), "plugin switched off")
			return true
		}
		return false
	})
	if !sawOn {
		t.Fatalf("progress showed only once the hanging plugin was switched off:\n%s", e.daemonLog())
	}
	pollUntil(t, "the hanging plugin switched off", func() bool {
		return strings.Contains(e.daemonLog(), "plugin switched off")
	})
	run := e.finishGatedRun(id)
	if run.State != "succeeded" || run.Progress == nil || run.Progress.Step != 10 || run.Progress.Total != 10 {
		t.Fatalf("run ended %s with progress %+v, want succeeded at step 10/10", run.State, run.Progress)
	}

	// plugins ls (a process of its own) knows the daemon switched it off.
	out := e.must("plugins", "ls")
	var line string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "hang ") {
			line = l
		}
	}
	if !strings.Contains(line, " off ") || !strings.Contains(line, "timed out") || !strings.Contains(line, "retried after") {
		t.Errorf("plugins ls shows hang as %q, want off, why and when it is retried:\n%s", line, out)
	}
	var infos []struct {
		Name      string     `json:"name"`
		Status    string     `json:"status"`
		OffReason string     `json:"off_reason"`
		RetryAt   *time.Time `json:"retry_at"`
	}
	if err := json.Unmarshal([]byte(e.must("plugins", "ls", "--json")), &infos); err != nil {
		t.Fatal(err)
	}
	for _, i := range infos {
		switch {
		case i.Name == "hang" && (i.Status != "off" || !strings.Contains(i.OffReason, "timed out") || i.RetryAt == nil || !i.RetryAt.After(time.Now())):
			t.Errorf("plugins ls --json: hang = %+v, want off with a reason and a retry time ahead", i)
		case i.Name != "hang" && i.Status != "ready" && i.Status != "pending":
			t.Errorf("plugins ls --json: %s is %s", i.Name, i.Status)
		}
	}
}

// Fault: a user plugin whose _initialize never returns, in a real run -> the run's progress shows before the load is cut, and the run ends with its progress
func TestFaultInitLoopPluginRun(t *testing.T) {
	e := newEnv(t)
	e.installTestPlugin("initloop")
	id := e.startGatedRun()

	var beforeDeadline bool
	pollUntil(t, "progress in status", func() bool {
		// Status first, then the log: progress seen while the log has
		// not said the load was cut came before the cut.
		if p := e.getRun(id).Progress; p != nil && p.Step == 5 {
			beforeDeadline = !strings.Contains(e.daemonLog(), "initloop.wasm")
			return true
		}
		return false
	})
	if !beforeDeadline {
		t.Fatalf("progress showed only once the looping plugin's load was given up:\n%s", e.daemonLog())
	}
	run := e.finishGatedRun(id)
	if run.State != "succeeded" || run.Progress == nil || run.Progress.Step != 10 {
		t.Fatalf("run ended %s with progress %+v, want succeeded at step 10", run.State, run.Progress)
	}
}
