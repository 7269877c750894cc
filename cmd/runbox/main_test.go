package main

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
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/testwait"
)

// These tests drive the real runbox binary the way a user does: the CLI
// starts a real daemon on demand, which runs real processes under real
// supervisors and keeps everything in a real Pebble store.

var runboxBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "runbox-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	// Both binaries, side by side as make build and go install leave them:
	// runbox hands the daemon, analyze and plugins to the runboxd beside it.
	runboxBin = filepath.Join(dir, "runbox")
	build := exec.Command("go", "build", "-o", dir+"/", ".", "../runboxd")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // as make builds them: runbox is also a container's init
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build runbox:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// env is one isolated runbox installation: its own home, socket and daemon.
type env struct {
	t    *testing.T
	home string
	work string
	vars []string
}

func newEnv(t *testing.T, extra ...string) *env {
	t.Helper()
	// Short paths: unix socket paths are limited to ~104 bytes.
	home, err := os.MkdirTemp("/tmp", "rbx")
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, home: home, work: t.TempDir()}
	e.vars = append(os.Environ(), "RUNBOX_HOME="+home, "RUNBOX_PLUGINS="+filepath.Join(home, "plugins"), "RUNBOX_NO_DOCKER=1")
	e.vars = append(e.vars, extra...)
	t.Cleanup(func() {
		e.killDaemon(syscall.SIGTERM)
		os.RemoveAll(home)
	})
	return e
}

type result struct {
	stdout, stderr string
	code           int
}

func (e *env) run(stdin string, args ...string) result {
	e.t.Helper()
	return e.runAs(runboxBin, nil, stdin, args...)
}

// runAs runs bin (a runbox binary) with args as cred's user (nil: this
// process's), in the env's workspace and environment.
func (e *env) runAs(bin string, cred *syscall.Credential, stdin string, args ...string) result {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = e.vars
	cmd.Dir = e.work
	cmd.Stdin = strings.NewReader(stdin)
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		e.t.Fatalf("runbox %v: %v", args, err)
	}
	return result{out.String(), errb.String(), code}
}

// must runs runbox and fails the test unless it exits 0.
func (e *env) must(args ...string) string {
	e.t.Helper()
	r := e.run("", args...)
	if r.code != 0 {
		e.t.Fatalf("runbox %v: exit %d\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
	}
	return r.stdout
}

func (e *env) getRun(id string) *api.Run {
	e.t.Helper()
	var r api.Run
	if err := json.Unmarshal([]byte(e.must("status", "--json", id)), &r); err != nil {
		e.t.Fatal(err)
	}
	return &r
}

// progressReady makes the daemon load its progress plugin and waits
// (bounded) until it has: the daemon loads it at the first output that may
// be progress, in the background, and a run's end waits only briefly for
// it (a first compile must not hold up a run), so on a loaded machine with
// a cold compilation cache a fresh daemon's first runs end with their
// progress unknown. Warm-up runs are made until one has its progress read.
// A test about how progress is shown starts with this; it is not about how
// soon the plugin loads.
// It returns how many warm-up runs it made (usually 1).
func (e *env) progressReady() (runs int) {
	e.t.Helper()
	err := testwait.For("the progress plugin to read a warm-up run's progress", 120*time.Second, func() error {
		id := strings.TrimSpace(e.must("run", "-d", "--", "echo", `##PROGRESS## {"step": 1, "total": 1}`))
		runs++
		e.must("wait", id)
		if r := e.getRun(id); r.Progress == nil {
			return errors.New("no progress recorded yet")
		}
		return nil
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return runs
}

// logPath is where the daemon keeps run id's framed log.
func (e *env) logPath(id string) string {
	return filepath.Join(e.home, "runs", id, "output.log")
}

func (e *env) daemonPID() int {
	b, err := os.ReadFile(filepath.Join(e.home, "daemon.lock"))
	if err != nil {
		return 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return pid
}

func (e *env) killDaemon(sig syscall.Signal) {
	pid := e.daemonPID()
	if pid <= 0 || syscall.Kill(pid, 0) != nil {
		return
	}
	_ = syscall.Kill(pid, sig)
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) && syscall.Kill(pid, 0) == nil {
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *env) write(name, content string) string {
	e.t.Helper()
	p := filepath.Join(e.work, name)
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		e.t.Fatal(err)
	}
	return p
}
