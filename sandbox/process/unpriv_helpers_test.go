package process_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
)

// Arguments of the test binary re-executed as an unprivileged daemon and
// as a run's command that says where it is (each followed by the address
// to try to reach).
const (
	unprivArg = "__unpriv_daemon"
	probeArg  = "__probe"
)

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
			RunID:          name,
			Command:        []string{filepath.Join(dir, "process.test"), probeArg, addr},
			Workdir:        work,
			LogPath:        filepath.Join(dir, name+".log"),
			StateDir:       filepath.Join(dir, name+".state"),
			Grace:          time.Second,
			ProcessOptions: sandbox.ProcessOptions{Isolate: map[bool]string{true: "full", false: "none"}[name != "none"]},
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
