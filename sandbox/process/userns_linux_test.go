package process_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/runbox/runbox/sandbox/process/confine"
)

// TestNonRootConfinementOnItsOwnSupervisor: a daemon without root starts
// runs that cut the network on a supervisor in a user namespace of its own
// (which confines them on a thread, as root's does), and runs that are not
// confined on a plain one, in the host's user namespace, where set-user-ID
// programs still work. The confined runs cannot reach a server on the
// host's loopback; the second one is served by a standby of that kind.
func TestNonRootConfinementOnItsOwnSupervisor(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to start the daemon as another user (as non-root, every confined run of the other tests takes this path)")
	}
	if err := confine.Probe().Can(confine.Full); err != nil {
		t.Skipf("this host cannot enforce full: %v", err)
	}
	dir, err := os.MkdirTemp("/tmp", "process-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "process.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	cmd := exec.Command(bin, unprivArg, l.Addr().String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("unprivileged daemon: %v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		got[k] = v
	}
	host := got["daemon"]
	for _, run := range []string{"full1", "full2"} {
		if got[run+".connect"] == "ok" {
			t.Errorf("%s reached the host's loopback server", run)
		}
		if got[run+".userns"] == host || got[run+".userns"] == "" {
			t.Errorf("%s ran in user namespace %q, the daemon's is %q: want one of its supervisor's own", run, got[run+".userns"], host)
		}
	}
	if got["none.userns"] != host {
		t.Errorf("an unconfined run ran in user namespace %q, want the daemon's %q", got["none.userns"], host)
	}
	if got["none.connect"] != "ok" {
		t.Errorf("an unconfined run could not reach the host's loopback: %s", got["none.connect"])
	}
	if got["standby"] != "ok" {
		t.Errorf("the second confined run was not served by the standby in a user namespace of its own: %s", got["standby"])
	}
}
