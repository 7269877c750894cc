package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/api"
)

// supervisorArg is the argv word of a process run's supervisor
// (supervisor.Arg; not imported, to keep the supervisor out of runboxd's
// dependencies for one string).
const supervisorArg = "__supervise"

// refuseConfinedPeers keeps confined runs from using the daemon: before
// Landlock ABI 9 a confined run can still connect to this (pathname) unix
// socket, and through it ask for a run without confinement. A peer that
// has no_new_privs set and descends from a supervisor is a confined run's
// process (every --isolate level but none sets no_new_privs, and it cannot
// be unset); its connection gets a 403 and is closed. Everyone else pays
// one read of /proc/PID/status per connection.
func refuseConfinedPeers(ln net.Listener, log *slog.Logger) net.Listener {
	return &peerCheck{Listener: ln, log: log}
}

type peerCheck struct {
	net.Listener
	log *slog.Logger
}

func (l *peerCheck) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return c, err
		}
		pid := peerPID(c)
		if pid <= 0 || !confinedRun(pid) {
			return c, nil
		}
		l.log.Warn("daemon: refused a connection from a confined run", "pid", pid)
		body, _ := json.Marshal(api.Error{Error: "a run confined with --isolate may not use the runbox daemon", Code: "forbidden"})
		fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
		c.Close()
	}
}

func peerPID(c net.Conn) int {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return 0
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return 0
	}
	var cred *unix.Ucred
	_ = raw.Control(func(fd uintptr) {
		cred, _ = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
	})
	if cred == nil {
		return 0
	}
	return int(cred.Pid)
}

// confinedRun reports whether pid has no_new_privs and a supervisor among
// its ancestors.
func confinedRun(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil || !bytes.Contains(b, []byte("\nNoNewPrivs:\t1")) {
		return false
	}
	for p, depth := pid, 0; p > 1 && depth < 64; depth++ {
		if cmd, err := os.ReadFile("/proc/" + strconv.Itoa(p) + "/cmdline"); err == nil {
			if args := strings.Split(string(cmd), "\x00"); len(args) > 1 && args[1] == supervisorArg {
				return true
			}
		}
		p = parentPID(p)
	}
	return false
}

func parentPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// pid (comm) state ppid ...: comm may hold spaces and parentheses.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 2 {
		return 0
	}
	ppid, _ := strconv.Atoi(f[1])
	return ppid
}
