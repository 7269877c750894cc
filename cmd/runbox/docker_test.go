package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
)

// dockerEnv is an env whose daemon may use Docker.
func dockerEnv(t *testing.T) (*env, string) {
	dockertest.Require(t)
	img := dockertest.BusyboxImage(t)
	e := newEnv(t, "RUNBOX_NO_DOCKER=0", "RUNBOX_IMAGE="+img)
	return e, img
}

func TestDockerRunThroughCLI(t *testing.T) {
	e, img := dockerEnv(t)
	r := e.run("hello from stdin\n", "run", "--sandbox", "docker", "--image", img, "--stdin", "-",
		"--", "sh", "-c", "cat; echo to-stderr >&2; touch made-here; exit 7")
	if r.code != 7 {
		t.Fatalf("exit %d, want 7: %s", r.code, r.stderr)
	}
	if r.stdout != "hello from stdin\n" || !strings.Contains(r.stderr, "to-stderr") {
		t.Errorf("stdout %q stderr %q", r.stdout, r.stderr)
	}
	st, err := os.Stat(filepath.Join(e.work, "made-here"))
	if err != nil {
		t.Fatalf("file written in the workspace: %v", err)
	}
	if sys := st.Sys().(*syscall.Stat_t); int(sys.Uid) != os.Getuid() || int(sys.Gid) != os.Getgid() {
		t.Errorf("workspace file owned by %d:%d, want %d:%d", sys.Uid, sys.Gid, os.Getuid(), os.Getgid())
	}
	// auto picks Docker now that the default image is present locally.
	if out := e.must("backends"); !strings.Contains(out, "auto → docker") {
		t.Errorf("backends:\n%s", out)
	}
}

func TestDockerOOMAndTimeoutThroughCLI(t *testing.T) {
	e, img := dockerEnv(t)
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--memory", "32m",
		"--", "sh", "-c", `x=$(head -c 200000000 /dev/zero | tr '\0' a); echo survived`)
	if r.code == 0 || !strings.Contains(r.stderr, "OOM_KILLED") {
		t.Errorf("memory hog: exit %d, stderr %q; want OOM_KILLED", r.code, r.stderr)
	}
	r = e.run("", "run", "--sandbox", "docker", "--image", img, "--timeout", "1s", "--grace", "1s", "--", "sleep", "60")
	if r.code != 124 || !strings.Contains(r.stderr, "TIMEOUT") {
		t.Errorf("timeout: exit %d, stderr %q", r.code, r.stderr)
	}
}

// A container that SIGKILLs its own process near its memory limit:
// Docker's State.OOMKilled is false, so the failure is KILLED with that
// evidence, not OOM_KILLED (issue #24). The OOM case is the test above.
func TestDockerSelfSIGKILLIsKilledNotOOM(t *testing.T) {
	e, img := dockerEnv(t)
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--memory", "96m",
		"--", "sh", "-c", `x=$(head -c 30000000 /dev/zero | tr '\0' a); kill -9 $$`)
	if r.code == 0 || !strings.Contains(r.stderr, "KILLED") || strings.Contains(r.stderr, "OOM_KILLED") || !strings.Contains(r.stderr, "no OOM kill") {
		t.Errorf("self SIGKILL: exit %d, stderr %q; want KILLED, not OOM_KILLED", r.code, r.stderr)
	}
}

// The daemon dies mid-run; the container goes on, and the next daemon
// re-attaches by label and continues the log with nothing lost or repeated.
func TestDockerDaemonKill9MidRun(t *testing.T) {
	e, img := dockerEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "docker", "--image", img, "--",
		"sh", "-c", `i=0; while [ $i -lt 300 ]; do echo "line $i"; i=$((i+1)); sleep 0.01; done`))
	waitFor(t, func() bool { return strings.Contains(e.run("", "logs", id).stdout, "line 40\n") })
	e.killDaemon(syscall.SIGKILL)
	if r := e.run("", "wait", "--timeout", "120s", id); r.code != 0 {
		t.Fatalf("wait after restart: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	var want bytes.Buffer
	for i := 0; i < 300; i++ {
		fmt.Fprintf(&want, "line %d\n", i)
	}
	if got := e.must("logs", "--stream", "stdout", id); got != want.String() {
		t.Errorf("log after re-attach: %d bytes, want %d", len(got), want.Len())
	}
	if r := e.getRun(id); r.State != api.Succeeded {
		t.Errorf("state %s", r.State)
	}
}

func TestDockerDaemonDownIsSandboxError(t *testing.T) {
	e, img := dockerEnv(t)
	e.vars = append(e.vars, "DOCKER_HOST=unix:///tmp/runbox-no-docker-here.sock")
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--", "true")
	if r.code != 125 {
		t.Errorf("exit %d, want 125", r.code)
	}
	if !strings.Contains(r.stderr, "SANDBOX_ERROR") || !strings.Contains(r.stderr, "no Docker daemon answers") {
		t.Errorf("stderr %q", r.stderr)
	}
	// auto falls back to the process sandbox and says why.
	if out := e.must("backends"); !strings.Contains(out, "auto → process") {
		t.Errorf("backends:\n%s", out)
	}
}

// A daemon started with --no-docker (RUNBOX_NO_DOCKER=1, as every newEnv)
// refuses a docker run saying why, whether or not Docker is up, and
// creates no run.
func TestNoDockerDaemonSaysWhyDockerIsMissing(t *testing.T) {
	e := newEnv(t)
	r := e.run("", "run", "--sandbox", "docker", "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "sandbox docker is not available: this daemon was started with --no-docker") {
		t.Fatalf("exit %d, stderr %q: want the refusal naming --no-docker", r.code, r.stderr)
	}
	if out := e.must("ls", "-n", "5"); strings.Contains(out, "true") {
		t.Errorf("a refused run was created:\n%s", out)
	}
}

// A container run whose image is not present locally is refused at once,
// with what to do, and creates no run; a pull happens only with --pull.
func TestDockerMissingImageRefusedWithoutPull(t *testing.T) {
	e, _ := dockerEnv(t)
	const img = "runbox-no-such-image:1"
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--", "true")
	if r.code == 0 || !strings.Contains(r.stderr, "is not present locally") || !strings.Contains(r.stderr, "--pull") {
		t.Fatalf("exit %d, stderr %q: want a refusal naming --pull", r.code, r.stderr)
	}
	if out := e.must("ls", "-n", "5"); strings.Contains(out, "true") {
		t.Errorf("a refused run was created:\n%s", out)
	}
	// With --pull runbox tries: offline that fails as a sandbox error
	// naming the pull, not as a refusal.
	r = e.run("", "run", "--sandbox", "docker", "--image", img, "--pull", "--", "true")
	if r.code == 0 || strings.Contains(r.stderr, "is not present locally: pull it") {
		t.Errorf("--pull did not try to pull: exit %d, stderr %q", r.code, r.stderr)
	}
}
