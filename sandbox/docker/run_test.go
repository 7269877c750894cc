package docker

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

func TestExitCodesAndSignals(t *testing.T) {
	e := setup(t)
	for _, tc := range []struct {
		name   string
		cmd    []string
		code   int
		signal string
		stdout string
		stderr string
	}{
		{"true", []string{"true"}, 0, "", "", ""},
		{"exit3", []string{"sh", "-c", "echo out; echo err >&2; exit 3"}, 3, "", "out\n", "err\n"},
		{"sigkill", []string{"sh", "-c", "kill -KILL $$"}, 137, "SIGKILL", "", ""},
		{"sigsegv", []string{"sh", "-c", "kill -SEGV $$"}, 139, "SIGSEGV", "", ""},
		{"notfound", []string{"no-such-command"}, 127, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := e.newSpec(t, tc.cmd...)
			ex, out := e.run(t, spec)
			if ex.Code != tc.code || ex.Signal != tc.signal || ex.OOMKilled || ex.TimedOut || ex.Lost {
				t.Errorf("exit = %+v, want code %d signal %q", ex, tc.code, tc.signal)
			}
			if got := string(out[runlog.Stdout]); got != tc.stdout {
				t.Errorf("stdout = %q, want %q", got, tc.stdout)
			}
			if tc.stderr != "" && string(out[runlog.Stderr]) != tc.stderr {
				t.Errorf("stderr = %q, want %q", out[runlog.Stderr], tc.stderr)
			}
			if ex.StartedAt.IsZero() || ex.EndedAt.Before(ex.StartedAt) {
				t.Errorf("times: %v .. %v", ex.StartedAt, ex.EndedAt)
			}
			if cs := e.containers(t, spec.RunID); len(cs) != 0 {
				t.Errorf("container not removed: %v", cs[0].ID)
			}
		})
	}
}

func TestShellMode(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "echo", "$((6*7))", "|", "tr", "4", "x")
	spec.Shell = true
	ex, out := e.run(t, spec)
	if ex.Code != 0 || string(out[runlog.Stdout]) != "x2\n" {
		t.Fatalf("exit %+v stdout %q", ex, out[runlog.Stdout])
	}
}

func TestStdin(t *testing.T) {
	e := setup(t)
	data := []byte("line one\nline two\x00\xff no newline")
	t.Run("bytes", func(t *testing.T) {
		spec := e.newSpec(t, "cat")
		spec.Stdin = data
		ex, out := e.run(t, spec)
		if ex.Code != 0 || string(out[runlog.Stdout]) != string(data) {
			t.Fatalf("exit %+v stdout %q", ex, out[runlog.Stdout])
		}
	})
	t.Run("file", func(t *testing.T) {
		spec := e.newSpec(t, "cat")
		spec.StdinFile = filepath.Join(t.TempDir(), "in")
		os.WriteFile(spec.StdinFile, data, 0o600)
		ex, out := e.run(t, spec)
		if ex.Code != 0 || string(out[runlog.Stdout]) != string(data) {
			t.Fatalf("exit %+v stdout %q", ex, out[runlog.Stdout])
		}
	})
	t.Run("none", func(t *testing.T) {
		spec := e.newSpec(t, "cat")
		ex, out := e.run(t, spec)
		if ex.Code != 0 || len(out[runlog.Stdout]) != 0 {
			t.Fatalf("exit %+v stdout %q", ex, out[runlog.Stdout])
		}
	})
}

func TestSetup(t *testing.T) {
	e := setup(t)
	t.Run("ok", func(t *testing.T) {
		spec := e.newSpec(t, "sh", "-c", "cat made; cat; echo main-err >&2")
		spec.Setup = []string{"echo setup-out; echo setup-err >&2", "echo made-by-setup > made"}
		spec.Stdin = []byte("stdin after the gate\n")
		ex, out := e.run(t, spec)
		if ex.Code != 0 || ex.SetupFailed {
			t.Fatalf("exit %+v", ex)
		}
		want := map[runlog.Stream]string{
			runlog.Stdout:      "made-by-setup\nstdin after the gate\n",
			runlog.Stderr:      "main-err\n",
			runlog.SetupStdout: "setup-out\n",
			runlog.SetupStderr: "setup-err\n",
		}
		for s, w := range want {
			if got := string(out[s]); got != w {
				t.Errorf("%s = %q, want %q", s, got, w)
			}
		}
	})
	t.Run("fails", func(t *testing.T) {
		spec := e.newSpec(t, "sh", "-c", "echo main ran > ran")
		spec.Setup = []string{"echo first", "exit 7", "echo never"}
		ex, out := e.run(t, spec)
		if ex.Code != 7 || !ex.SetupFailed {
			t.Fatalf("exit %+v, want code 7 and setup failed", ex)
		}
		if _, err := os.Stat(filepath.Join(spec.Workdir, "ran")); err == nil {
			t.Error("main command ran after a failed setup")
		}
		if string(out[runlog.SetupStdout]) != "first\n" {
			t.Errorf("setup stdout %q", out[runlog.SetupStdout])
		}
	})
}

func TestNoShellInImage(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	// An image without /bin/sh: busybox with the link removed.
	spec := e.newSpec(t, "rm", "/bin/sh")
	spec.User = "0:0"
	spec.KeepContainer = true
	h, err := e.sb.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if ex, _ := h.Wait(ctx); ex.Code != 0 {
		t.Fatalf("rm /bin/sh: %+v", ex)
	}
	const nosh = "runbox-test-nosh:latest"
	if _, err := e.cli.ContainerCommit(ctx, h.Ref(), containerCommitOptions(nosh)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { removeImage(e.cli, nosh) })

	plain := e.newSpec(t, "echo", "no shell needed")
	plain.Image = nosh
	if ex, out := e.run(t, plain); ex.Code != 0 || string(out[runlog.Stdout]) != "no shell needed\n" {
		t.Fatalf("plain command: %+v %q", ex, out[runlog.Stdout])
	}
	withSetup := e.newSpec(t, "true")
	withSetup.Image = nosh
	withSetup.Setup = []string{"true"}
	_, err = e.sb.Start(ctx, withSetup)
	if err == nil || !strings.Contains(err.Error(), "no /bin/sh") {
		t.Fatalf("start with setup: err = %v, want a no /bin/sh error", err)
	}
	if cs := e.containers(t, withSetup.RunID); len(cs) != 0 {
		t.Error("container left behind after a failed start")
	}
}

func TestStopAndTimeout(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	t.Run("stop", func(t *testing.T) {
		spec := e.newSpec(t, "sh", "-c", "echo started; exec sleep 60")
		h, err := e.sb.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		// Stopped once its command runs: this is about what a stop does to
		// a running command. (A stop while the container's init is still
		// starting ends the run too, by SIGKILL after the grace.)
		if err := testwait.For("the command to start", time.Minute, func() error {
			if !strings.Contains(string(streams(t, spec.LogPath)[runlog.Stdout]), "started") {
				return errors.New("not yet")
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := h.Stop(ctx, time.Second); err != nil {
			t.Fatal(err)
		}
		ex, _ := h.Wait(ctx)
		if !ex.Cancelled || ex.TimedOut || ex.Signal != "SIGTERM" {
			t.Fatalf("exit %+v, want cancelled by SIGTERM", ex)
		}
		if err := h.Stop(ctx, time.Second); err != nil {
			t.Errorf("second stop: %v", err)
		}
	})
	t.Run("timeout-ignores-term", func(t *testing.T) {
		// The command ignores SIGTERM, so only the kill after the grace
		// period ends it; the container is kept to prove nothing runs on.
		spec := e.newSpec(t, "sh", "-c", "trap '' TERM; echo started; while :; do sleep 1; done")
		spec.Timeout, spec.Grace, spec.KeepContainer = 1500*time.Millisecond, time.Second, true
		ex, out := e.run(t, spec)
		if !ex.TimedOut || ex.Cancelled || ex.Code != 137 || ex.Signal != "SIGKILL" {
			t.Fatalf("exit %+v, want timed out, SIGKILL", ex)
		}
		if string(out[runlog.Stdout]) != "started\n" || !strings.Contains(string(out[runlog.Meta]), "timed out") {
			t.Errorf("log: %q", out)
		}
		c, err := e.cli.ContainerInspect(ctx, containerName(spec.RunID))
		if err != nil {
			t.Fatal(err)
		}
		if c.State.Running || c.State.Pid != 0 {
			t.Errorf("container still running: %+v", c.State)
		}
		if _, err := e.cli.ContainerTop(ctx, c.ID, nil); err == nil {
			t.Error("docker top still lists processes")
		}
		if d := ex.EndedAt.Sub(ex.StartedAt); d > 20*time.Second {
			t.Errorf("run took %v", d)
		}
	})
}

func TestOOMKilled(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "echo filling; tail /dev/zero")
	spec.Limits.MemoryBytes = 32 << 20
	ex, out := e.run(t, spec)
	if !ex.OOMKilled || ex.Code != 137 || ex.Signal != "SIGKILL" {
		t.Fatalf("exit %+v, want OOM killed", ex)
	}
	if string(out[runlog.Stdout]) != "filling\n" {
		t.Errorf("stdout %q", out[runlog.Stdout])
	}
}

func TestStats(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	spec := e.newSpec(t, "sleep", "30")
	h, err := e.sb.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Stop(ctx, time.Second)
	st, err := h.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Pids < 1 || st.RSSBytes == 0 {
		t.Errorf("stats %+v", st)
	}
	h.Stop(ctx, time.Second)
	h.Wait(ctx)
	if _, err := h.Stats(ctx); err == nil {
		t.Error("stats after the end: no error")
	}
}

func TestUnreachableDaemon(t *testing.T) {
	sb := New(Options{Host: "unix:///tmp/runbox-none.sock", DefaultImage: "busybox"})
	h := sb.Health(context.Background())
	if h.Available || !strings.Contains(h.Detail, "no Docker daemon answers at unix:///tmp/runbox-none.sock") {
		t.Errorf("health %+v", h)
	}
	_, err := sb.Start(context.Background(), sandbox.Spec{RunID: "x", Command: []string{"true"}, LogPath: filepath.Join(t.TempDir(), "log"), Workdir: t.TempDir()})
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "unix:///tmp/runbox-none.sock") {
		t.Errorf("start: %v, want ErrUnavailable naming the socket", err)
	}
	if _, err := sb.Recover(context.Background(), sandbox.Spec{RunID: "x", LogPath: filepath.Join(t.TempDir(), "log")}); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("recover: %v, want ErrUnavailable", err)
	}
}

// A socket whose daemon is gone (the file is left, nothing listens) says
// the same as no socket; one this user may not use says how to get in.
func TestUnreachableDaemonSaysWhy(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "docker.sock")
	l, err := net.ListenUnix("unix", &net.UnixAddr{Name: sock, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	l.SetUnlinkOnClose(false)
	l.Close()
	h := New(Options{Host: "unix://" + sock}).Health(context.Background())
	if h.Available || !strings.Contains(h.Detail, "no Docker daemon answers at unix://"+sock) {
		t.Errorf("a socket nobody listens on: %+v", h)
	}
	// As root (CI) the socket's mode does not apply, so the error a
	// non-member of the docker group gets is built here.
	denied := &net.OpError{Op: "dial", Net: "unix", Err: os.NewSyscallError("connect", syscall.EACCES)}
	if why := whyUnreachable("unix:///var/run/docker.sock", denied); !strings.Contains(why, "usermod -aG docker") {
		t.Errorf("permission denied: %q", why)
	}
}
