package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// TestFaultCommandRightAfterDaemonKill: the daemon is killed with -9 and the
// next command follows at once, while the socket file and possibly a
// half-accepted connection of the dead daemon are still there. The command
// must start a new daemon, go through, and submit its run exactly once
// (the client sends a request that got no answer again, with the same
// idempotency key). Before the client retried, this failed with
// "connection reset by peer" in 2 of 6 tries.
//
// Fault: kill -9 of the daemon while the next command connects, 12 rounds -> every command goes through, each run submitted exactly once
func TestFaultCommandRightAfterDaemonKill(t *testing.T) {
	e := newEnv(t)
	const rounds = 12
	for i := 1; i <= rounds; i++ {
		e.must("ls") // a live daemon
		pid := e.daemonPID()
		if pid <= 0 {
			t.Fatal("no daemon pid")
		}
		// The kill lands before, during or after the command's request
		// (staggered by round): no wait for the daemon to be gone.
		go func(delay time.Duration) {
			time.Sleep(delay)
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}(time.Duration(i%4) * 2 * time.Millisecond)
		want := fmt.Sprintf("round-%d", i)
		r := e.run("", "run", "--sandbox", "process", "--", "echo", want)
		if r.code != 0 || strings.TrimSpace(r.stdout) != want {
			t.Fatalf("round %d: exit %d, stdout %q, stderr %q", i, r.code, r.stdout, r.stderr)
		}
		var list api.RunList
		if err := json.Unmarshal([]byte(e.must("ls", "--json", "-n", "100")), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Runs) != i {
			t.Fatalf("round %d: %d runs in the store, want %d (a submission ran twice or was lost)", i, len(list.Runs), i)
		}
	}
}
