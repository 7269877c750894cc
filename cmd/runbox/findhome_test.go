package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestClientFindsTheDaemonFromTheHomeAlone: a daemon started from a full
// environment (XDG_RUNTIME_DIR set: it listens there) is reached by a
// client launched with only what an MCP stdio transport passes (HOME,
// LOGNAME, PATH, SHELL, TERM, USER), through the pointer in the home; no
// second daemon is started. The minimal client's own place for the
// socket (the home) stays empty: the pointer is how it got there.
func TestClientFindsTheDaemonFromTheHomeAlone(t *testing.T) {
	top, err := os.MkdirTemp("/tmp", "rbxh")
	if err != nil {
		t.Fatal(err)
	}
	home, rt := filepath.Join(top, "h"), filepath.Join(top, "rt")
	for _, d := range []string{home, rt} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	state := filepath.Join(home, ".local", "state", "runbox")
	e := &env{t: t, home: state, work: t.TempDir()}
	t.Cleanup(func() { e.killDaemon(syscall.SIGTERM); os.RemoveAll(top) })
	minimal := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "USER=root", "LOGNAME=root", "SHELL=/bin/sh", "TERM=dumb"}
	var full []string
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); !strings.HasPrefix(k, "RUNBOX_") && !strings.HasPrefix(k, "XDG_") && k != "HOME" {
			full = append(full, kv)
		}
	}
	full = append(full, "HOME="+home, "XDG_RUNTIME_DIR="+rt, "RUNBOX_NO_DOCKER=1")

	e.vars = full
	e.must("run", "--", "true")
	pid := e.daemonPID()
	if _, err := os.Stat(filepath.Join(rt, "runbox.sock")); err != nil || pid == 0 {
		t.Fatalf("the daemon should listen in the runtime dir: %v (pid %d)", err, pid)
	}
	if b, _ := os.ReadFile(filepath.Join(state, "daemon.socket")); strings.TrimSpace(string(b)) != filepath.Join(rt, "runbox.sock") {
		t.Fatalf("pointer: %q", b)
	}

	e.vars = minimal
	out := e.must("run", "--", "echo", "from-a-minimal-env")
	if !strings.Contains(out, "from-a-minimal-env") {
		t.Errorf("output: %q", out)
	}
	if got := e.daemonPID(); got != pid {
		t.Errorf("a second daemon (pid %d, first %d) was started", got, pid)
	}
	if _, err := os.Stat(filepath.Join(state, "runbox.sock")); err == nil {
		t.Errorf("a socket appeared in the home: a second daemon listened there")
	}
}
