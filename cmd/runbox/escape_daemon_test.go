package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox/docker/dockertest"
)

// Attacks on the daemon's socket (issue 22): a confined run or a container
// that can reach the socket asks the daemon for a run without confinement.
// The socket is put in the run's workspace, so nothing but the daemon's
// own check stands between the attack and its target; each attack is also
// made from --isolate none (or the host), where it must succeed, to prove
// it is real. The attacker is host/daemon/internal/peerattack.

// attackResult is peerattack's Result.
type attackResult struct {
	Tries            int    `json:"tries"`
	Reached          int    `json:"reached"`
	RefusedAtConnect int    `json:"refused_at_connect"`
	RefusedAtWrite   int    `json:"refused_at_write"`
	Accepted         bool   `json:"accepted"`
	Status           string `json:"status"`
	Err              string `json:"err"`
}

// escapeEnv is an env whose daemon listens in its workspace, with a static
// peerattack beside the socket.
func escapeEnv(t *testing.T, e *env) (socket, attacker string) {
	t.Helper()
	socket = filepath.Join(e.work, "d.sock")
	e.vars = append(e.vars, "RUNBOX_SOCKET="+socket)
	attacker = filepath.Join(e.work, "peerattack")
	build := exec.Command("go", "build", "-o", attacker, "github.com/runbox/runbox/host/daemon/internal/peerattack")
	build.Env = append(os.Environ(), "CGO_ENABLED=0") // static: it runs in a bare container too
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build peerattack: %v\n%s", err, out)
	}
	e.must("ls") // start the daemon
	return socket, attacker
}

// escapeBody asks for an unconfined run that leaves marker behind.
func escapeBody(t *testing.T, workdir, marker string) string {
	b, err := json.Marshal(map[string]any{
		"command": []string{"sh", "-c", "echo escaped > " + marker},
		"workdir": workdir, "sandbox": "process", "isolate": "none",
	})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func parseAttack(t *testing.T, r result) attackResult {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	var a attackResult
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &a); err != nil {
		t.Fatalf("peerattack printed no result (exit %d): %v\nstdout: %s\nstderr: %s", r.code, err, r.stdout, r.stderr)
	}
	return a
}

// waitFile reports whether path appears within d.
func waitFile(path string, d time.Duration) bool {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// TestEscapeDaemonRace is the reproducer of issue 22, ported: a child
// connects to the daemon and exits, and its parent, holding the
// connection, asks for a run with --isolate none. From a confined run it
// is refused every time; from --isolate none it gets its run.
func TestEscapeDaemonRace(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	socket, attacker := escapeEnv(t, e)
	outside := t.TempDir()
	const tries = 30
	for _, level := range []string{"net", "fs", "full"} {
		t.Run(level, func(t *testing.T) {
			marker := filepath.Join(outside, "escaped-"+level)
			r := e.run("", "run", "--isolate", level, "--", attacker, "race", socket, "30", escapeBody(t, e.work, marker))
			a := parseAttack(t, r)
			if a.Accepted {
				t.Errorf("--isolate %s: the daemon accepted the request on try %d: %+v", level, a.Tries, a)
			} else if a.Reached != tries {
				t.Fatalf("the attack reached the socket %d times of %d, so it did not test the daemon: %+v\n%s", a.Reached, tries, a, r.stderr)
			} else if a.RefusedAtConnect+a.RefusedAtWrite != tries {
				t.Errorf("--isolate %s: want all %d tries refused, got %+v", level, tries, a)
			}
			if waitFile(marker, 500*time.Millisecond) {
				t.Errorf("--isolate %s: the unconfined run ran", level)
			}
		})
	}
	t.Run("none", func(t *testing.T) {
		marker := filepath.Join(outside, "escaped-none")
		r := e.run("", "run", "--isolate", "none", "--", attacker, "race", socket, "30", escapeBody(t, e.work, marker))
		if a := parseAttack(t, r); !a.Accepted {
			t.Fatalf("--isolate none: the request was not accepted, so the attack proves nothing: %+v\n%s", a, r.stderr)
		}
		if !waitFile(marker, 30*time.Second) {
			t.Error("--isolate none: the run asked for never ran")
		}
	})
}

// TestEscapeDaemonDirect: one process connects and asks.
func TestEscapeDaemonDirect(t *testing.T) {
	needIsolation(t)
	e := newEnv(t)
	socket, attacker := escapeEnv(t, e)
	outside := t.TempDir()
	for _, level := range []string{"none", "net", "fs", "full"} {
		t.Run(level, func(t *testing.T) {
			marker := filepath.Join(outside, "escaped-"+level)
			r := e.run("", "run", "--isolate", level, "--", attacker, "direct", socket, escapeBody(t, e.work, marker))
			a := parseAttack(t, r)
			if a.Reached != 1 {
				t.Fatalf("the attack did not reach the socket: %+v", a)
			}
			if level == "none" {
				if !a.Accepted || !waitFile(marker, 30*time.Second) {
					t.Errorf("--isolate none: %+v, want its run accepted and run", a)
				}
				return
			}
			if a.Accepted || !strings.Contains(a.Status, "403") {
				t.Errorf("--isolate %s: %+v, want a 403", level, a)
			}
			if waitFile(marker, 500*time.Millisecond) {
				t.Errorf("--isolate %s: the unconfined run ran", level)
			}
		})
	}
	// The CLI says why.
	r := e.run("", "run", "--isolate", "full", "--", runboxBin, "ls")
	if r.code == 0 || !strings.Contains(r.stdout+r.stderr, "may not use the runbox daemon") {
		t.Errorf("runbox from --isolate full: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestEscapeDaemonFromAContainer: a Docker run's workspace holds the
// daemon's socket. The container's processes are in another pid
// namespace, and are refused; the same request from the host is served.
func TestEscapeDaemonFromAContainer(t *testing.T) {
	dockertest.Require(t)
	e, img := dockerEnv(t)
	socket, attacker := escapeEnv(t, e)
	outside := t.TempDir()
	const tries = 30
	for _, mode := range []string{"direct", "race"} {
		t.Run(mode, func(t *testing.T) {
			in, host := filepath.Join(outside, mode+"-from-container"), filepath.Join(outside, mode+"-from-host")
			attack := func(exe, socket, marker string) []string {
				if mode == "race" {
					return []string{exe, mode, socket, "30", escapeBody(t, e.work, marker)}
				}
				return []string{exe, mode, socket, escapeBody(t, e.work, marker)}
			}
			r := e.run("", append([]string{"run", "--sandbox", "docker", "--image", img, "--"}, attack("/workspace/peerattack", "/workspace/d.sock", in)...)...)
			a := parseAttack(t, r)
			switch {
			case a.Accepted:
				t.Errorf("from a container: the daemon accepted the request on try %d: %+v", a.Tries, a)
			case a.Reached != a.Tries || (mode == "race" && a.Tries != tries):
				t.Fatalf("the container did not reach the socket each time: %+v\n%s", a, r.stderr)
			case a.RefusedAtConnect+a.RefusedAtWrite != a.Tries:
				t.Errorf("from a container: %+v, want every try refused", a)
			}
			cmd := attack(attacker, socket, host)
			out, err := exec.Command(cmd[0], cmd[1:]...).Output()
			if err != nil {
				t.Fatalf("from the host: %v", err)
			}
			if a := parseAttack(t, result{stdout: string(out)}); !a.Accepted {
				t.Errorf("from the host: %+v, want the request served", a)
			}
			if !waitFile(host, 30*time.Second) {
				t.Error("the host's run never ran")
			}
			if waitFile(in, 500*time.Millisecond) {
				t.Error("the container's run ran")
			}
		})
	}
}
