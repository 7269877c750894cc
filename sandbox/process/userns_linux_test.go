package process_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/confine"
)

// Arguments of the test binary re-executed as an unprivileged daemon and
// as a run's command that says where it is (each followed by the address
// to try to reach).
const (
	unprivArg = "__unpriv_daemon"
	probeArg  = "__probe"
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

// unprivDaemon plays the daemon for TestNonRootConfinementOnItsOwnSupervisor,
// as uid 65534 from a copy of the test binary in dir: it runs three probes
// and prints key=value lines.
func unprivDaemon(dir, addr string) int {
	sb := newSandbox(process.Options{Standby: true})
	defer sb.Close()
	self, _ := os.Readlink("/proc/self/ns/user")
	fmt.Printf("daemon=%s\n", self)
	standby := 0
	for _, name := range []string{"full1", "full2", "none"} {
		work := filepath.Join(dir, name)
		if err := os.Mkdir(work, 0o755); err != nil {
			fmt.Println(err)
			return 1
		}
		spec := sandbox.Spec{
			RunID:    name,
			Command:  []string{filepath.Join(dir, "process.test"), probeArg, addr},
			Workdir:  work,
			LogPath:  filepath.Join(dir, name+".log"),
			StateDir: filepath.Join(dir, name+".state"),
			Grace:    time.Second,
			Isolate:  map[bool]string{true: "full", false: "none"}[name != "none"],
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		h, err := sb.Start(ctx, spec)
		if err == nil && name == "full2" {
			fmt.Printf("standby=%s\n", map[bool]string{true: "ok", false: fmt.Sprintf("supervisor %s, the standby was %d", h.Ref(), standby)}[h.Ref() == strconv.Itoa(standby)])
		}
		if err == nil {
			_, err = h.Wait(ctx)
		}
		cancel()
		if err != nil {
			fmt.Printf("%s: %v\n", name, err)
			return 1
		}
		b, _ := os.ReadFile(filepath.Join(work, "probe"))
		for _, kv := range strings.Fields(string(b)) {
			fmt.Printf("%s.%s\n", name, kv)
		}
		if name == "full1" {
			// The standby for the next confined run is started beside this one.
			for deadline := time.Now().Add(10 * time.Second); standby == 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
				standby = sb.OwnUserNSStandbyPid()
			}
		}
	}
	return 0
}

// probe is a run's command: it writes its user namespace and whether it
// reached addr into ./probe.
func probe(addr string) int {
	ns, _ := os.Readlink("/proc/self/ns/user")
	res := "ok"
	if c, err := net.DialTimeout("tcp", addr, 5*time.Second); err != nil {
		res = strings.ReplaceAll(err.Error(), " ", "_")
	} else {
		c.Close()
	}
	return map[bool]int{true: 0, false: 1}[os.WriteFile("probe", []byte("userns="+ns+" connect="+res+"\n"), 0o644) == nil]
}
