package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// These tests confine real runs through the real binaries: the daemon,
// the supervisor and its __confine entry, and the kernel's namespaces and
// Landlock. They run as whatever user runs the suite (root on CI); the
// unprivileged path is covered in package confine (TestUnprivilegedUser).

// needIsolation skips where the kernel cannot confine at all (the tests
// of refusals below need no kernel support).
func needIsolation(t *testing.T) {
	t.Helper()
	if v, err := llsyscall.LandlockGetABIVersion(); err != nil || v < 1 {
		t.Skip("no Landlock on this kernel")
	}
}

// loopbackServer listens on the host's 127.0.0.1 and returns its port.
func loopbackServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

func TestIsolateNetCutsTheHostLoopback(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	port := loopbackServer(t)
	connect := "exec 3<>/dev/tcp/127.0.0.1/" + port
	if r := e.run("", "run", "--isolate", "net", "--", "bash", "-c", connect); r.code == 0 {
		t.Errorf("--isolate net reached the host's 127.0.0.1:%s\n%s", port, r.stderr)
	}
	if r := e.run("", "run", "--isolate", "net", "--network", "host", "--", "bash", "-c", connect); r.code != 0 {
		t.Errorf("--isolate net --network host: exit %d, want 0 (the server is up)\n%s", r.code, r.stderr)
	}
	// Its own loopback still works: a server it starts itself.
	own := `python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); socket.create_connection(s.getsockname())' 2>/dev/null || busybox true`
	if r := e.run("", "run", "--isolate", "net", "--", "sh", "-c", own); r.code != 0 {
		t.Errorf("a run's own loopback: exit %d\n%s", r.code, r.stderr)
	}
	// Run after run on one standby supervisor (whose reaper takes every
	// child: confining must not start a child of its own and wait for it).
	for i := 0; i < 20; i++ {
		if r := e.run("", "run", "--isolate", "full", "--", "true"); r.code != 0 {
			t.Fatalf("confined run %d: exit %d\n%s", i, r.code, r.stderr)
		}
	}
	id := strings.TrimSpace(e.must("run", "-d", "--isolate", "full", "--", "true"))
	e.must("wait", id)
	if got := e.getRun(id).Spec.Isolate; got != "full" {
		t.Errorf("status says isolate %q, want full", got)
	}
}

func TestIsolateFSConfinesWritesAndSecrets(t *testing.T) {
	needIsolation(t)
	home := t.TempDir()
	key := filepath.Join(home, ".ssh", "id_ed25519")
	os.MkdirAll(filepath.Dir(key), 0o700)
	os.WriteFile(key, []byte("PRIVATE"), 0o600)
	e := newEnv(t, "HOME="+home)
	// Outside the places a run gets privately (/tmp is its own): there
	// only Landlock decides.
	outside, extra := outsideScratch(t), t.TempDir()
	for _, tt := range []struct {
		name, script string
		args         []string
		ok           bool
	}{
		{"write in the workspace", "echo x > in.txt && cat in.txt", nil, true},
		{"write in TMPDIR", `echo x > "$TMPDIR/t" && cat "$TMPDIR/t"`, nil, true},
		{"write in an --rw path", "echo x > " + extra + "/f", []string{"--rw", extra}, true},
		{"write outside", "echo x > " + outside + "/f", nil, false},
		{"read ~/.ssh/id_*", "cat ~/.ssh/id_*", nil, false},
		{"a child writes outside", "sh -c 'sh -c \"echo x > " + outside + "/g\"'", nil, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"run", "--isolate", "fs"}, tt.args...)
			r := e.run("", append(args, "--", "sh", "-c", tt.script)...)
			if (r.code == 0) != tt.ok {
				t.Errorf("exit %d, want success=%v\nstdout: %s\nstderr: %s", r.code, tt.ok, r.stdout, r.stderr)
			}
			if strings.Contains(r.stdout, "PRIVATE") {
				t.Error("the run read the ssh key")
			}
		})
	}
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("a confined run wrote outside its workspace")
	}
	// Classified as a permission problem, with the way out named.
	id := strings.TrimSpace(e.must("run", "-d", "--isolate", "fs", "--", "sh", "-c", "echo x > "+outside+"/h"))
	e.run("", "wait", id)
	r := e.getRun(id)
	if r.Failure == nil || r.Failure.Code != "PERMISSION_DENIED" {
		t.Fatalf("failure %+v, want PERMISSION_DENIED", r.Failure)
	}
	if !strings.Contains(strings.Join(r.Failure.Suggestions, "\n"), "--rw") {
		t.Errorf("suggestions %q do not name --rw", r.Failure.Suggestions)
	}
}

func TestIsolateHoldsAfterDaemonKill9(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	port := loopbackServer(t)
	outside := t.TempDir()
	script := e.write("late.sh", fmt.Sprintf(`#!/bin/sh
while [ ! -e go ]; do sleep 0.02; done
echo x > %s/f && echo wrote-outside || echo denied-outside
bash -c 'exec 3<>/dev/tcp/127.0.0.1/%s' 2>/dev/null && echo reached || echo unreachable
sh -c 'echo y > %s/g' 2>/dev/null && echo child-wrote || echo child-denied
`, outside, port, outside))
	id := strings.TrimSpace(e.must("run", "-d", "--isolate", "full", "--", "sh", script))
	old := e.daemonPID()
	e.killDaemon(syscall.SIGKILL)
	if syscall.Kill(old, 0) == nil {
		t.Fatal("daemon survived SIGKILL")
	}
	os.WriteFile(filepath.Join(e.work, "go"), nil, 0o644)
	e.run("", "wait", "--timeout", "60s", id)
	out := e.must("logs", "--stream", "stdout", id)
	for _, want := range []string{"denied-outside", "unreachable", "child-denied"} {
		if !strings.Contains(out, want) {
			t.Errorf("after kill -9 of the daemon the run printed %q, want %s", out, want)
		}
	}
}

// TestIsolateRefusesCriticalRiskWithoutIsolation makes isolation
// unavailable with a real switch, RUNBOX_CONFINE_DISABLE in the daemon's
// environment (the daemon and its supervisors then neither report nor use
// user namespaces and Landlock, as on a kernel without them).
func TestIsolateRefusesCriticalRiskWithoutIsolation(t *testing.T) {
	e := newEnv(t, "RUNBOX_CONFINE_DISABLE=userns,landlock")
	// The risky line never runs: the script exits first.
	e.write("install.sh", "exit 0\ncurl -fsSL http://example.invalid/install.sh | sh\n")
	var plan api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--", "sh", "install.sh")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Isolation == nil || !plan.Isolation.Refused || plan.Isolation.Level != "none" || plan.Isolation.Wanted != "full" {
		t.Fatalf("plan isolation %+v, want level none, wanted full, refused", plan.Isolation)
	}
	if rec := plan.Result.Recommendation; rec == nil || rec.Network != "host" {
		t.Errorf("plan's network line %+v: it must say the run gets the host network here", rec)
	}
	r := e.run("", "exec", plan.ID)
	if r.code == 0 || !strings.Contains(r.stderr, "refused") || !strings.Contains(r.stderr, "--allow-risk") {
		t.Fatalf("exec of a critical plan without isolation: exit %d, stderr %q; want a refusal naming --allow-risk", r.code, r.stderr)
	}
	runs := e.must("ls", "--json")
	var list []api.Run
	if err := json.Unmarshal([]byte(runs), &list); err != nil {
		var wrapped struct{ Runs []api.Run }
		if json.Unmarshal([]byte(runs), &wrapped) != nil {
			t.Fatalf("ls --json: %v", err)
		}
		list = wrapped.Runs
	}
	if len(list) != 1 || list[0].State != api.Failed || !strings.HasPrefix(list[0].Reason, "refused:") {
		t.Fatalf("runs after the refusal: %+v, want one failed run whose reason is the refusal", list)
	}
	c := client.New(client.Options{Home: e.home, Socket: filepath.Join(e.home, "runbox.sock")})
	evs, err := c.Events(context.Background(), list[0].ID, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].Message, "refused") {
		t.Errorf("events %+v, want the refusal", evs)
	}
	if r := e.run("", "exec", "--allow-risk", plan.ID); r.code != 0 {
		t.Errorf("exec --allow-risk: exit %d %s", r.code, r.stderr)
	}
	// Asked for by name, a level this host cannot give is an error.
	if r := e.run("", "run", "--isolate", "fs", "--", "true"); r.code == 0 || !strings.Contains(r.stderr, "cannot be enforced") {
		t.Errorf("--isolate fs without Landlock: exit %d %q, want a clear refusal", r.code, r.stderr)
	}
}

func TestIsolatePlanPromiseIsKept(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	e.write("install.sh", "exit 0\ncurl -fsSL http://example.invalid/install.sh | sh\n")
	var plan api.Plan
	if err := json.Unmarshal([]byte(e.must("plan", "--json", "--", "sh", "install.sh")), &plan); err != nil {
		t.Fatal(err)
	}
	if plan.Isolation == nil || plan.Isolation.Level != "full" || plan.Isolation.Refused {
		t.Fatalf("plan isolation %+v, want full", plan.Isolation)
	}
	id := strings.TrimSpace(e.must("exec", "-d", plan.ID))
	e.must("wait", id)
	if got := e.getRun(id).Spec.Isolate; got != "full" {
		t.Errorf("the plan promised full; the run enforced %q", got)
	}
	// Less than promised for a critical risk, by name: refused too.
	if r := e.run("", "exec", "--isolate", "none", plan.ID); r.code == 0 || !strings.Contains(r.stderr, "refused") {
		t.Errorf("exec --isolate none of a critical plan: exit %d %q, want refused", r.code, r.stderr)
	}
}

func TestIsolateBadInput(t *testing.T) {
	needIsolation(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, ".ssh", "proj"), 0o700)
	e := newEnv(t, "HOME="+home)
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"--rw that does not exist", []string{"run", "--isolate", "fs", "--rw", "/nonexistent/dir", "--", "true"}, "does not exist"},
		{"workspace inside ~/.ssh", []string{"run", "--isolate", "fs", "-w", filepath.Join(home, ".ssh", "proj"), "--", "true"}, "may not read"},
		{"workspace holding ~/.ssh", []string{"run", "--isolate", "full", "-w", home, "--", "true"}, "contains"},
		{"unknown level", []string{"run", "--isolate", "most", "--", "true"}, "most"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := e.run("", tt.args...)
			if r.code == 0 || !strings.Contains(r.stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want an error containing %q", r.code, r.stderr, tt.want)
			}
		})
	}
}

// TestIsolateInAContainer: a container gives any level by itself (its own
// root filesystem, no network unless --network says so), so --isolate is
// accepted there, unless --network contradicts it.
func TestIsolateInAContainer(t *testing.T) {
	e, img := dockerEnv(t)
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--isolate", "net", "--network", "bridge", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "choose one") {
		t.Errorf("--isolate net --network bridge in a container: exit %d %q, want a refusal", r.code, r.stderr)
	}
	if r := e.run("", "run", "--sandbox", "docker", "--image", img, "--isolate", "full", "--", "true"); r.code != 0 {
		t.Errorf("--isolate full in a container: exit %d %q", r.code, r.stderr)
	}
}

// TestIsolateRunCannotUseTheDaemon: the daemon's socket is a pathname
// unix socket, which Landlock governs only from ABI 9 and a network
// namespace not at all; through it a confined run could ask for an
// unconfined one. The daemon refuses confined peers.
func TestIsolateRunCannotUseTheDaemon(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	r := e.run("", "run", "--isolate", "net", "--", runboxBin, "run", "--isolate", "none", "--", "true")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "may not use the runbox daemon") {
		t.Errorf("a confined run asked the daemon for a run: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if r := e.run("", "run", "--isolate", "none", "--", runboxBin, "ls"); r.code != 0 {
		t.Errorf("an unconfined run using runbox: exit %d %s", r.code, r.stderr)
	}
}

// TestIsolateHidesTheDockerSocket: with Docker's socket a run is root on
// the host; before Landlock ABI 9 only masking it keeps it away.
func TestIsolateHidesTheDockerSocket(t *testing.T) {
	needIsolation(t)
	if st, err := os.Stat("/var/run/docker.sock"); err != nil || st.Mode()&os.ModeSocket == 0 {
		t.Skip("no Docker socket on this host")
	}
	e := newEnv(t)
	if r := e.run("", "run", "--isolate", "none", "--", "test", "-S", "/var/run/docker.sock"); r.code != 0 {
		t.Fatalf("unconfined: the socket is not there (exit %d)", r.code)
	}
	for _, level := range []string{"net", "fs", "full"} {
		if r := e.run("", "run", "--isolate", level, "--", "test", "-S", "/var/run/docker.sock"); r.code == 0 {
			t.Errorf("--isolate %s: the Docker socket is reachable", level)
		}
		// Not even for root in the run, which must not unmount the mask.
		unmask := "umount /run/docker.sock 2>/dev/null; umount /var/run/docker.sock 2>/dev/null; test -S /var/run/docker.sock"
		if r := e.run("", "run", "--isolate", level, "--", "sh", "-c", unmask); r.code == 0 {
			t.Errorf("--isolate %s: the run unmounted the mask over the Docker socket", level)
		}
	}
}
