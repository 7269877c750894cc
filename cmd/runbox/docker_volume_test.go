package main

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox/docker"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
)

func logSize(path string) int64 {
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

// seqSum is sha256 and size of `seq 1 n`.
func seqSum(n int) (sum [32]byte, size int64) {
	h := sha256.New()
	var b []byte
	for i := 1; i <= n; i++ {
		b = fmt.Appendf(b[:0], "%d\n", i)
		h.Write(b)
		size += int64(len(b))
	}
	return [32]byte(h.Sum(nil)), size
}

// The daemon is killed with -9 while a container prints as fast as it
// can: the container's init writes the log, not the daemon, so the next
// daemon finds every byte and the run's true end.
func TestDockerDaemonKill9MidOutput(t *testing.T) {
	e, img := dockerEnv(t)
	const n = 6_000_000 // 47 MB
	// seq 1 n in two halves, so the kill surely lands before the end.
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "docker", "--image", img, "--shell", "--",
		fmt.Sprintf("seq 1 %d; sleep 3; seq %d %d", n/2, n/2+1, n)))
	waitFor(t, func() bool { return logSize(e.logPath(id)) > 4<<20 })
	e.killDaemon(syscall.SIGKILL)
	sum, size := seqSum(n)
	if at := logSize(e.logPath(id)); at >= size {
		t.Fatalf("the run had printed everything (%d bytes) before the kill", at)
	}
	if r := e.run("", "wait", "--timeout", "120s", id); r.code != 0 {
		t.Fatalf("wait after restart: exit %d: %s %s", r.code, r.stdout, r.stderr)
	}
	if got := e.must("logs", "--stream", "stdout", id); sha256.Sum256([]byte(got)) != sum {
		t.Errorf("log after kill -9: %d bytes, not seq 1 %d", len(got), n)
	}
	if r := e.getRun(id); r.State != api.Succeeded {
		t.Errorf("state %s", r.State)
	}
}

// `runbox stop` ends a container run printing at full speed within its
// grace (it hung for 30 s with the run left running when the daemon
// copied output from the log driver).
func TestDockerStopWhilePrinting(t *testing.T) {
	e, img := dockerEnv(t)
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "docker", "--image", img, "--grace", "2s", "--", "yes"))
	defer os.Remove(e.logPath(id))
	waitFor(t, func() bool { return logSize(e.logPath(id)) > 50<<20 })
	begin := time.Now()
	e.must("stop", id)
	if r := e.run("", "wait", "--timeout", "60s", id); r.code == 0 {
		t.Errorf("wait: exit 0 for a stopped run")
	}
	if took := time.Since(begin); took > 12*time.Second {
		t.Errorf("stop and wait took %v", took)
	}
	if r := e.getRun(id); r.State != api.Cancelled {
		t.Errorf("state %s, want cancelled", r.State)
	}
}

// Short docker runs take warm containers once the daemon has seen one;
// the daemon's warm containers go with it when it exits.
func TestDockerPoolThroughCLI(t *testing.T) {
	e, img := dockerEnv(t)
	cli := dockertest.Require(t)
	warm := func() int {
		cs, err := cli.ContainerList(context.Background(), container.ListOptions{All: true,
			Filters: filters.NewArgs(filters.Arg("label", docker.LabelHome+"="+e.home), filters.Arg("label", docker.LabelPoolBox))})
		if err != nil {
			t.Fatal(err)
		}
		return len(cs)
	}
	for i := range 4 {
		r := e.run("", "run", "--sandbox", "docker", "--image", img, "--", "sh", "-c", "echo run "+fmt.Sprint(i)+"; exit 3")
		if r.code != 3 || r.stdout != fmt.Sprintf("run %d\n", i) {
			t.Fatalf("run %d: exit %d stdout %q stderr %q", i, r.code, r.stdout, r.stderr)
		}
		waitFor(t, func() bool { return warm() == 2 })
	}
	e.killDaemon(syscall.SIGTERM)
	if n := warm(); n != 0 {
		t.Errorf("%d warm containers left after the daemon exited", n)
	}
}
