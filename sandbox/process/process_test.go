package process_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
	"github.com/runbox/runbox/sandbox/runlog"
)

func TestExitCode(t *testing.T) {
	tests := []struct {
		name   string
		script string
		code   int
		signal string
	}{
		{"zero", "exit 0", 0, ""},
		{"three", "exit 3", 3, ""},
		{"killed", "kill -KILL $$", 137, "SIGKILL"},
		{"terminated", "kill -TERM $$", 143, "SIGTERM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e, _ := run(t, shSpec(t, tt.script))
			if e.Code != tt.code || e.Signal != tt.signal {
				t.Fatalf("exit = %d %q, want %d %q", e.Code, e.Signal, tt.code, tt.signal)
			}
			if e.Lost || e.Error != "" || e.TimedOut || e.Cancelled || e.OOMKilled {
				t.Fatalf("unexpected flags: %+v", e)
			}
			if e.StartedAt.IsZero() || e.EndedAt.Before(e.StartedAt) {
				t.Fatalf("bad times: %v .. %v", e.StartedAt, e.EndedAt)
			}
		})
	}
}

func TestArgvNotShell(t *testing.T) {
	// Without Shell the argv reaches the program as is: no word splitting, no globbing.
	e, out := run(t, newSpec(t, "printf", "%s|", "a b", "*", "$HOME"))
	if e.Code != 0 || string(out[runlog.Stdout]) != "a b|*|$HOME|" {
		t.Fatalf("exit %d, stdout %q", e.Code, out[runlog.Stdout])
	}
}

func TestStdin(t *testing.T) {
	file := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(file, []byte("from a file\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		setup func(*sandbox.Spec)
		want  string
	}{
		{"bytes", func(s *sandbox.Spec) { s.Stdin = []byte("hello\x00\xff") }, "hello\x00\xff"},
		{"file", func(s *sandbox.Spec) { s.StdinFile = file }, "from a file\n"},
		{"none", func(*sandbox.Spec) {}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			spec := newSpec(t, "cat")
			tt.setup(&spec)
			e, out := run(t, spec)
			if e.Code != 0 || string(out[runlog.Stdout]) != tt.want {
				t.Fatalf("exit %d, stdout %q, want %q", e.Code, out[runlog.Stdout], tt.want)
			}
			if exists(filepath.Join(spec.StateDir, "stdin")) {
				t.Fatal("stdin copy left in the state dir")
			}
		})
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("RUNBOX_T_KEEP", "host")
	t.Setenv("RUNBOX_T_OVER", "host")
	t.Setenv("RUNBOX_T_DROP", "host")
	script := `echo "keep=$RUNBOX_T_KEEP over=$RUNBOX_T_OVER drop=$RUNBOX_T_DROP new=$RUNBOX_T_NEW"`
	tests := []struct {
		name  string
		clean bool
		want  string
	}{
		{"inherit", false, "keep=host over=spec drop=host new=spec\n"},
		{"clean", true, "keep=host over=spec drop= new=spec\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := shSpec(t, script)
			spec.Env = []string{"RUNBOX_T_OVER=spec", "RUNBOX_T_NEW=spec"}
			spec.CleanEnv = tt.clean
			spec.EnvAllow = []string{"RUNBOX_T_KEEP"}
			e, out := run(t, spec)
			if e.Code != 0 || string(out[runlog.Stdout]) != tt.want {
				t.Fatalf("exit %d, stdout %q, want %q", e.Code, out[runlog.Stdout], tt.want)
			}
		})
	}
	t.Run("secrets not left on disk", func(t *testing.T) {
		spec := shSpec(t, "true")
		spec.Env = []string{"TOKEN=s3cret"}
		e, _ := run(t, spec)
		if e.Code != 0 {
			t.Fatalf("exit %d", e.Code)
		}
		filepath.Walk(spec.StateDir, func(p string, info os.FileInfo, err error) error {
			if err == nil && !info.IsDir() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("s3cret")) {
					t.Errorf("%s holds the secret", p)
				}
			}
			return nil
		})
	})
}

func TestSetup(t *testing.T) {
	t.Run("output kept apart", func(t *testing.T) {
		spec := shSpec(t, "cat made; echo main-err >&2")
		spec.Setup = []string{"echo one > made; echo setup-out", "echo setup-err >&2"}
		e, out := run(t, spec)
		if e.Code != 0 || e.SetupFailed {
			t.Fatalf("exit %+v", e)
		}
		want := map[runlog.Stream]string{
			runlog.SetupStdout: "setup-out\n",
			runlog.SetupStderr: "setup-err\n",
			runlog.Stdout:      "one\n",
			runlog.Stderr:      "main-err\n",
		}
		for s, w := range want {
			if string(out[s]) != w {
				t.Errorf("%s = %q, want %q", s, out[s], w)
			}
		}
		if !strings.Contains(string(out[runlog.Meta]), "setup 1/2") {
			t.Errorf("meta lacks setup notes: %q", out[runlog.Meta])
		}
	})
	t.Run("failure stops the run", func(t *testing.T) {
		spec := shSpec(t, "echo main")
		spec.Setup = []string{"exit 7", "echo never"}
		e, out := run(t, spec)
		if e.Code != 7 || !e.SetupFailed {
			t.Fatalf("exit %+v, want code 7 and SetupFailed", e)
		}
		if len(out[runlog.Stdout]) > 0 || len(out[runlog.SetupStdout]) > 0 {
			t.Fatalf("later commands ran: %q %q", out[runlog.Stdout], out[runlog.SetupStdout])
		}
	})
}

func TestAssets(t *testing.T) {
	src := t.TempDir()
	os.WriteFile(filepath.Join(src, "a.txt"), []byte("A"), 0o644)
	os.MkdirAll(filepath.Join(src, "sub", "deep"), 0o755)
	os.WriteFile(filepath.Join(src, "sub", "deep", "b.sh"), []byte("echo B"), 0o755)
	spec := shSpec(t, "cat data/a.txt one.txt; sh data/sub/deep/b.sh; test -x data/sub/deep/b.sh && echo x")
	spec.Assets = []sandbox.Asset{{Src: src, Dst: "data"}, {Src: filepath.Join(src, "a.txt"), Dst: "one.txt"}}
	e, out := run(t, spec)
	if e.Code != 0 || string(out[runlog.Stdout]) != "AAB\nx\n" {
		t.Fatalf("exit %d, stdout %q, stderr %q", e.Code, out[runlog.Stdout], out[runlog.Stderr])
	}

	spec = shSpec(t, "true")
	spec.Assets = []sandbox.Asset{{Src: src, Dst: "../escape"}}
	if e, _ := run(t, spec); e.Error == "" || e.Code != 125 {
		t.Fatalf("asset outside the workspace: %+v", e)
	}
}

func TestStartFailures(t *testing.T) {
	t.Run("missing program", func(t *testing.T) {
		e, out := run(t, newSpec(t, "no-such-program-xyz", "arg"))
		if e.Code != 127 || e.Error != "" {
			t.Fatalf("exit %+v, want 127 without a sandbox error", e)
		}
		if !strings.Contains(string(out[runlog.Stderr]), "no-such-program-xyz: command not found") {
			t.Fatalf("stderr %q", out[runlog.Stderr])
		}
	})
	t.Run("not executable", func(t *testing.T) {
		spec := newSpec(t, "./script")
		os.WriteFile(filepath.Join(spec.Workdir, "script"), []byte("#!/bin/sh\n"), 0o644)
		if e, _ := run(t, spec); e.Code != 126 {
			t.Fatalf("exit %+v, want 126", e)
		}
	})
	t.Run("bad workdir", func(t *testing.T) {
		spec := newSpec(t, "true")
		spec.Workdir = filepath.Join(spec.Workdir, "missing")
		e, _ := run(t, spec)
		if e.Code != 125 || !strings.Contains(e.Error, "workdir") {
			t.Fatalf("exit %+v, want a workdir error", e)
		}
	})
	t.Run("bad spec", func(t *testing.T) {
		spec := newSpec(t)
		if _, err := newSandbox(process.Options{}).Start(context.Background(), spec); err == nil {
			t.Fatal("empty command started")
		}
	})
}

func TestInvalidUTF8Intact(t *testing.T) {
	raw := "ok \xff\xfe \xe2\x82 caf\xc3\xa9\n"
	spec := newSpec(t, "cat")
	spec.Stdin = []byte(raw)
	e, out := run(t, spec)
	if e.Code != 0 || string(out[runlog.Stdout]) != raw {
		t.Fatalf("exit %d, stdout %q, want %q", e.Code, out[runlog.Stdout], raw)
	}
}

func TestUsage(t *testing.T) {
	e, _ := run(t, newSpec(t, "python3", "-c", "b = b'x' * (40 << 20); s = sum(range(3_000_000))"))
	if e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	if e.Usage.PeakRSSBytes < 40<<20 || e.Usage.CPUSeconds <= 0 || e.Usage.WallSeconds <= 0 {
		t.Fatalf("usage %+v", e.Usage)
	}
}

func TestRecover(t *testing.T) {
	sb := newSandbox(process.Options{})
	t.Run("not found", func(t *testing.T) {
		_, err := sb.Recover(context.Background(), newSpec(t, "true"))
		if !errors.Is(err, sandbox.ErrNotFound) {
			t.Fatalf("err = %v, want ErrNotFound", err)
		}
	})
	t.Run("ended", func(t *testing.T) {
		spec := shSpec(t, "exit 4")
		want := wait(t, start(t, sb, spec))
		h, err := sb.Recover(context.Background(), spec)
		if err != nil {
			t.Fatal(err)
		}
		if got := wait(t, h); got.Code != 4 || !got.EndedAt.Equal(want.EndedAt) {
			t.Fatalf("recovered %+v, want %+v", got, want)
		}
		if err := h.Stop(context.Background(), 0); err != nil {
			t.Fatalf("stop of an ended run: %v", err)
		}
		if _, err := h.Stats(context.Background()); err == nil {
			t.Fatal("stats of an ended run succeeded")
		}
	})
}

func TestNoZombies(t *testing.T) {
	sb := newSandbox(process.Options{})
	for range 5 {
		wait(t, start(t, sb, shSpec(t, "true & true; exit 0")))
	}
	// Wait returns once the exit record is on disk; the supervisor is
	// reaped right after, in the background. A leak stays a zombie.
	deadline := time.Now().Add(time.Minute)
	for z := zombies(t); len(z) > 0; z = zombies(t) {
		if time.Now().After(deadline) {
			t.Fatalf("zombie children: %v", z)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func exists(p string) bool { _, err := os.Lstat(p); return err == nil }

func TestSupervisorCannotReadSpec(t *testing.T) {
	// The supervisor started by hand on a state dir without a spec (as
	// after a crash between Start's steps) records a sandbox error.
	dir := t.TempDir()
	exe, _ := os.Executable()
	cmd := exec.Command(exe, supervisor.Arg, dir)
	if err := cmd.Run(); err == nil {
		t.Fatal("supervisor without a spec succeeded")
	}
	h, err := newSandbox(process.Options{}).Recover(context.Background(), sandbox.Spec{StateDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if e := wait(t, h); e.Code != 125 || !strings.Contains(e.Error, "read spec") {
		t.Fatalf("exit %+v", e)
	}
}

func TestHealth(t *testing.T) {
	h := newSandbox(process.Options{}).Health(context.Background())
	if h.Name != sandbox.Process || !h.Available || h.Info["memory_limit"] == "" {
		t.Fatalf("health %+v", h)
	}
}

// TestWaitEndsAtTheExitRecord: the supervisor says on its ready pipe when
// the exit record is on disk, and Wait returns then, without waiting for
// the supervisor process to exit (here it lingers on purpose); the
// supervisor is still reaped once it does exit.
func TestWaitEndsAtTheExitRecord(t *testing.T) {
	release := filepath.Join(t.TempDir(), "release")
	t.Setenv(supervisortest.LingerEnv, release)
	spec := newSpec(t, "sh", "-c", "echo done; exit 3")
	h := start(t, newSandbox(process.Options{}), spec)
	early, err := h.(sandbox.EarlyExiter).WaitEarly(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e := wait(t, h)
	if e.Code != 3 {
		t.Fatalf("exit %+v, want code 3", e)
	}
	// Wait returns once the record's file is in place (nothing touches
	// the state dir after it but the supervisor's exit); WaitEarly may
	// return before, with the same record.
	if _, err := os.Stat(filepath.Join(spec.StateDir, "exit.json")); err != nil {
		t.Fatalf("exit record after Wait: %v", err)
	}
	if a, b := fmt.Sprint(early), fmt.Sprint(e); a != b {
		t.Errorf("WaitEarly gave %s, Wait %s", a, b)
	}
	sup, _ := strconv.Atoi(h.Ref())
	if !alive(sup) {
		t.Fatal("the supervisor had exited: Wait did not end at the exit record")
	}
	if err := os.WriteFile(release, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	proc := "/proc/" + h.Ref()
	waitFor(t, "the supervisor to be reaped", func() bool {
		_, err := os.Stat(proc)
		return err != nil
	})
	// Wait had the record from the supervisor's message, before the file
	// was in place; the two must agree.
	b, err := os.ReadFile(filepath.Join(spec.StateDir, "exit.json"))
	if err != nil {
		t.Fatal(err)
	}
	var disk sandbox.Exit
	if err := json.Unmarshal(b, &disk); err != nil {
		t.Fatal(err)
	}
	if got, _ := json.Marshal(e); string(got) != string(b) || !disk.EndedAt.Equal(e.EndedAt) {
		t.Errorf("Wait gave %s, exit.json holds %s", got, b)
	}
}
