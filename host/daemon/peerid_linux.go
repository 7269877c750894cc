package daemon

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// peer is a process on the other end of the daemon's socket: its pid in
// the daemon's pid namespace (0: not visible from it) and, where the kernel
// gives one, a pidfd that pins that very process (-1 if none), so its pid
// cannot be handed to another process while it is being judged.
type peer struct {
	pid   int
	pidfd int
}

func (p peer) close() {
	if p.pidfd >= 0 {
		unix.Close(p.pidfd)
	}
}

// alive reports whether the process is still there. With a pidfd this is
// exact; without one the caller has only the pid, which the kernel may
// have given to another process since.
func (p peer) alive() bool {
	if p.pidfd >= 0 {
		return unix.PidfdSendSignal(p.pidfd, 0, nil, 0) == nil
	}
	if p.pid <= 0 {
		return false
	}
	err := unix.Kill(p.pid, 0)
	return err == nil || err == unix.EPERM
}

// errGone: the process is not there any more (or is a zombie), so nothing
// about it can be proven. Callers branch on it: a connector that is gone
// leaves its connection to be judged by who writes on it.
var errGone = errors.New("its process is gone")

// refusal is why a peer may not use the daemon; its text is the 403's.
type refusal struct {
	who, why string
}

func (r *refusal) Error() string { return r.who + " may not use the runbox daemon: " + r.why }

func doubt(why string, args ...any) error {
	return &refusal{"a process the daemon cannot identify", fmt.Sprintf(why, args...)}
}

const confinedWho = "a run confined with --isolate"

// judge decides whether a peer may speak to the daemon. Everything it
// knows comes from procfs, read through a directory fd of the peer's own
// /proc entry (which goes stale, rather than switching to another
// process, if the pid is reused) and confirmed afterwards by the pidfd:
// a peer that was alive after the reads was the process read.
type judge struct {
	proc string // procfs mount, "/proc" but in tests
	self nsIDs  // the daemon's own namespaces
}

// nsIDs are namespace links as readlink shows them ("pid:[4026531836]")
// and the number of levels in the NSpid line of a status file.
type nsIDs struct {
	pid, net, user string
	depth          int
}

func newJudge(proc string) (*judge, error) {
	j := &judge{proc: proc}
	self := proc + "/" + strconv.Itoa(os.Getpid())
	st, err := os.ReadFile(self + "/status")
	if err != nil {
		return nil, fmt.Errorf("read own status: %w", err)
	}
	if j.self.depth = len(statusField(st, "NSpid")); j.self.depth == 0 {
		return nil, errors.New("own status has no NSpid line")
	}
	for _, ns := range []struct {
		name string
		to   *string
	}{{"pid", &j.self.pid}, {"net", &j.self.net}, {"user", &j.self.user}} {
		if *ns.to, err = os.Readlink(self + "/ns/" + ns.name); err != nil {
			return nil, fmt.Errorf("read own namespaces: %w", err)
		}
	}
	return j, nil
}

// check returns nil when p may use the daemon, errGone when p's process
// is gone, and a *refusal otherwise. Any read it cannot make refuses.
func (j *judge) check(p peer) error {
	if p.pid <= 0 {
		return &refusal{"a process outside the daemon's pid namespace", "its pid is not visible from the daemon (pid 0)"}
	}
	dir, err := unix.Open(j.proc+"/"+strconv.Itoa(p.pid), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ESRCH) {
			return errGone
		}
		return doubt("its /proc entry cannot be opened: %v", err)
	}
	defer unix.Close(dir)
	if err := j.judgeAt(dir, p.pid); err != nil {
		if !errors.Is(err, errGone) && !p.alive() {
			return errGone // it died as it was read
		}
		return err
	}
	// The reads above were of p's process only if it is still alive now.
	if !p.alive() {
		return errGone
	}
	if p.pidfd < 0 {
		// No pidfd (older kernel): the directory fd still names the
		// process it was opened for, and reads through it fail once that
		// process is gone.
		if _, err := readAt(dir, "stat"); err != nil {
			return errGone
		}
	}
	return nil
}

func (j *judge) judgeAt(dir, pid int) error {
	st, err := readAt(dir, "status")
	if err != nil {
		if errors.Is(err, unix.ESRCH) || errors.Is(err, unix.ENOENT) {
			return errGone
		}
		return doubt("its /proc status cannot be read: %v", err)
	}
	if state := statusField(st, "State"); len(state) == 0 {
		return doubt("its /proc status has no State line")
	} else if state[0] == "Z" || state[0] == "X" {
		return errGone
	}
	if err := j.samePidNS(dir, st); err != nil {
		return err
	}
	nnp := statusField(st, "NoNewPrivs")
	if len(nnp) != 1 {
		return doubt("its /proc status has no NoNewPrivs line")
	}
	if nnp[0] == "0" {
		// Every confined level sets no_new_privs, and nothing unsets it.
		return nil
	}
	return j.notARun(dir, pid)
}

// samePidNS refuses a process in another pid namespace than the daemon's:
// a container's (its processes are visible to the daemon, one level down).
// NSpid, which anyone may read, lists the pid at each level from the
// procfs's namespace down: one entry when the daemon is in procfs's own
// namespace and the peer too. The ns link says the same where it can be
// read (not for another user's process).
func (j *judge) samePidNS(dir int, status []byte) error {
	container := &refusal{"a process in another pid namespace (a container)", "only processes beside the daemon may use it"}
	depth := len(statusField(status, "NSpid"))
	if depth == 0 {
		return doubt("its /proc status has no NSpid line")
	}
	if depth != j.self.depth {
		return container
	}
	link, err := readlinkAt(dir, "ns/pid")
	switch {
	case err == nil && link != j.self.pid:
		return container
	case err == nil:
		return nil
	case errors.Is(err, unix.EACCES) && j.self.depth == 1:
		return nil // NSpid alone proves it: both are in procfs's namespace
	default:
		return doubt("its pid namespace cannot be read: %v", err)
	}
}

// notARun is asked about a process with no_new_privs: it is refused if
// anything else says it is a confined run (or in a sandbox of its own): a
// network or user namespace other than the daemon's (--isolate net and
// full make both; fs makes a user namespace to mask sockets), a run's
// cgroup (which a run confined to its workspace cannot leave), or a
// supervisor among its ancestors. Any of these it cannot read refuses too.
func (j *judge) notARun(dir, pid int) error {
	for _, ns := range []struct{ name, self string }{{"net", j.self.net}, {"user", j.self.user}} {
		link, err := readlinkAt(dir, "ns/"+ns.name)
		if err != nil {
			return doubt("it has no_new_privs and its %s namespace cannot be read: %v", ns.name, err)
		}
		if link != ns.self {
			return &refusal{confinedWho, "its process has no_new_privs in a " + ns.name + " namespace of its own"}
		}
	}
	cg, err := readAt(dir, "cgroup")
	if err != nil {
		return doubt("it has no_new_privs and its cgroup cannot be read: %v", err)
	}
	if name := runCgroup(cg); name != "" {
		return &refusal{confinedWho, "its process has no_new_privs in the run's cgroup " + name}
	}
	sup, err := j.supervisorAncestor(pid)
	if err != nil {
		return doubt("it has no_new_privs and its ancestors cannot be read: %v", err)
	}
	if sup > 0 {
		return &refusal{confinedWho, fmt.Sprintf("its process has no_new_privs and descends from the run's supervisor (pid %d)", sup)}
	}
	return nil
}

// supervisorArg is the argv word of a process run's supervisor
// (supervisor.Arg; not imported, to keep the supervisor out of runboxd's
// dependencies for one string).
const supervisorArg = "__supervise"

// supervisorAncestor walks up from pid's parent and returns the first
// supervisor's pid, or 0. A supervisor is a subreaper, so a run's process
// that double-forks is re-parented to it, not past it.
func (j *judge) supervisorAncestor(pid int) (int, error) {
	p := pid
	for depth := 0; depth < 64; depth++ {
		st, err := os.ReadFile(j.proc + "/" + strconv.Itoa(p) + "/stat")
		if err != nil {
			return 0, err
		}
		if p = statPPID(st); p <= 1 {
			return 0, nil
		}
		cmd, err := os.ReadFile(j.proc + "/" + strconv.Itoa(p) + "/cmdline")
		if err != nil {
			return 0, err
		}
		if args := bytes.Split(cmd, []byte{0}); len(args) > 1 && string(args[1]) == supervisorArg {
			return p, nil
		}
	}
	return 0, errors.New("more than 64 ancestors")
}

// runCgroup returns the run cgroup's name in a /proc/PID/cgroup, or "".
// The supervisor names it runbox-RUNID-SUPERVISORPID.
func runCgroup(b []byte) string {
	for _, line := range strings.Split(string(b), "\n") {
		// hierarchy-ID:controllers:path
		f := strings.SplitN(line, ":", 3)
		if len(f) != 3 {
			continue
		}
		for _, seg := range strings.Split(f[2], "/") {
			i := strings.LastIndexByte(seg, '-')
			if !strings.HasPrefix(seg, "runbox-") || i <= len("runbox-") || i == len(seg)-1 {
				continue
			}
			if _, err := strconv.ParseUint(seg[i+1:], 10, 32); err == nil {
				return seg
			}
		}
	}
	return ""
}

// statusField returns the words of a "Name:\tvalue" line of a status file.
func statusField(b []byte, name string) []string {
	key := []byte(name + ":")
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if bytes.HasPrefix(line, key) {
			return strings.Fields(string(line[len(key):]))
		}
	}
	return nil
}

// statPPID is the ppid of a /proc/PID/stat: "pid (comm) state ppid ...",
// where comm may hold spaces and parentheses.
func statPPID(b []byte) int {
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

// readAt reads a small procfs file below dir.
func readAt(dir int, name string) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var out []byte
	buf := make([]byte, 4096)
	for len(out) < 1<<16 {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			break
		}
		out = append(out, buf[:n]...)
	}
	return out, nil
}

func readlinkAt(dir int, name string) (string, error) {
	buf := make([]byte, 128)
	n, err := unix.Readlinkat(dir, name, buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}
