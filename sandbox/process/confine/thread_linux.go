package confine

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

// InThread reports whether p can be applied without the confine entry:
// on an OS thread of the starting process, which then forks the command,
// as the child inherits that thread's namespaces, no_new_privs, Landlock
// domain and capability bounding set. That saves the entry's exec (a Go
// binary's start, most of what confinement costs). Every level above none
// makes a mount namespace (privateMounts), and a network cut a network
// namespace: both need CAP_SYS_ADMIN over this process's user namespace:
// root, or a supervisor started in a user namespace of its own
// (SupervisorUserNS). A multithreaded process cannot enter a new user
// namespace itself.
func InThread(p Policy) bool {
	if p.Level == None || p.Level == "" {
		return false
	}
	return nsCapable()
}

// StartInThread runs start (which must fork the command, e.g. cmd.Start)
// on a new OS thread that first confines itself as p says. The thread is
// never handed back to the Go scheduler: it keeps the run's restrictions
// and lives until release is called, as a child's parent-death signal
// follows the thread that forked it; then it exits. cmdPath is the
// command, readable under a filesystem level.
func StartInThread(p Policy, cmdPath string, start func() error) (release func(), err error) {
	return StartInThreadFrom(p, cmdPath, nil, start)
}

// StartInThreadFrom is StartInThread with prepare run first on the new
// thread, before it confines itself, while it may still do what the
// confinement takes away (the supervisor moves the thread into the run's
// cgroup there, so that the command is born inside). If confining then
// fails, the undo prepare returned runs on the thread before it exits.
func StartInThreadFrom(p Policy, cmdPath string, prepare func() (undo func()), start func() error) (release func(), err error) {
	if err := quickHost().Can(p.Level); err != nil {
		return func() {}, fmt.Errorf("--isolate %s cannot be enforced here: %w", p.Level, err)
	}
	errc := make(chan error, 1)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread() // and never unlocked: the thread dies with this goroutine
		undo := func() {}
		if prepare != nil {
			undo = prepare()
		}
		if err := applyThread(p, cmdPath); err != nil {
			undo()
			errc <- err
			return
		}
		errc <- start()
		<-done
	}()
	if err := <-errc; err != nil {
		close(done)
		return func() {}, err
	}
	return func() { close(done) }, nil
}

var netNS struct {
	sync.Mutex
	fd int // 0: not made yet
}

// emptyNetNS is a network namespace with only loopback (up), made once
// per process and entered by every confined run it starts: making one
// costs about 1.5 ms of kernel time per run, and tearing it down more, in
// a kernel worker. Runs of one supervisor follow one another and none can
// change it (CAP_NET_ADMIN is out of their bounding set); whatever a run
// left listening dies with its processes, which the supervisor ends.
func emptyNetNS() (int, error) {
	netNS.Lock()
	defer netNS.Unlock()
	if netNS.fd > 0 {
		return netNS.fd, nil
	}
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread leaves its namespace behind and exits
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			ch <- res{0, fmt.Errorf("new network namespace: %w", err)}
			return
		}
		if err := loopbackUp(); err != nil {
			ch <- res{0, fmt.Errorf("bring up loopback: %w", err)}
			return
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		ch <- res{fd, err}
	}()
	r := <-ch
	if r.err != nil {
		return 0, r.err
	}
	netNS.fd = r.fd
	return r.fd, nil
}

// quickHost is what a supervisor checks before confining: not Probe,
// whose namespace trial costs a process start (and whose child the
// supervisor's reaper, which reaps every child, would take); making the
// namespaces is the trial there, and its failure the error.
func quickHost() Host {
	h := Host{LandlockABI: LandlockABI(), UserNS: !disabled("userns"), NoUserNS: "disabled by " + DisableEnv}
	switch {
	case disabled("landlock"):
		h.NoLandlock = "disabled by " + DisableEnv
	case h.LandlockABI < 1:
		h.NoLandlock = "the kernel has no Landlock"
	}
	return h
}

// rootCaps are the capabilities a confined root run gives up (the bounding
// set of its thread, so of everything it execs): what would let it leave
// the confinement or change the host — modules, mounts, raw devices, the
// host's clock, ptrace, network administration, BPF and the like.
var rootCaps = []uintptr{
	unix.CAP_SYS_MODULE, unix.CAP_SYS_ADMIN, unix.CAP_SYS_RAWIO, unix.CAP_SYS_BOOT,
	unix.CAP_SYS_PTRACE, unix.CAP_SYS_TIME, unix.CAP_MKNOD, unix.CAP_NET_ADMIN,
	unix.CAP_NET_RAW, unix.CAP_MAC_ADMIN, unix.CAP_MAC_OVERRIDE, unix.CAP_BPF,
	unix.CAP_PERFMON, unix.CAP_SYSLOG, unix.CAP_AUDIT_CONTROL, unix.CAP_LINUX_IMMUTABLE,
	unix.CAP_SYS_RESOURCE, unix.CAP_WAKE_ALARM, unix.CAP_BLOCK_SUSPEND, unix.CAP_SYS_PACCT,
	unix.CAP_SYS_TTY_CONFIG, unix.CAP_LEASE, unix.CAP_AUDIT_READ, unix.CAP_CHECKPOINT_RESTORE,
}

// dropCaps clears the ambient capabilities a supervisor in a user
// namespace of its own holds (SupervisorUserNS), and takes rootCaps out of
// the bounding set when running as root (in the host's user namespace or
// a run's own): root in a confined run must not be able to unmount a
// masked socket, load a module or reach the host's devices. Without root
// and ambient capabilities, exec drops every capability.
func dropCaps() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	if os.Geteuid() != 0 {
		return nil
	}
	for _, c := range rootCaps {
		if err := unix.Prctl(unix.PR_CAPBSET_DROP, c, 0, 0, 0); err != nil && !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("drop capability %d: %w", c, err)
		}
	}
	return nil
}

// applyThread confines the calling (locked) thread.
func applyThread(p Policy, cmdPath string) error {
	// A mount namespace of the thread's own (unshare gives the thread its
	// own root and working directory too, which a namespace change
	// needs), made per run: one kept for the supervisor's life would go
	// stale, and a run's private /tmp is its own.
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("new mount namespace: %w", err)
	}
	if err := privateMounts(p, cmdPath); err != nil {
		return err
	}
	if p.Level.Network() {
		fd, err := emptyNetNS()
		if err != nil {
			return err
		}
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("enter the network namespace: %w", err)
		}
	}
	return restrict(p, cmdPath)
}

// restrict is what both paths do last, on the thread that forks or execs
// the command: capabilities, no_new_privs, Landlock.
func restrict(p Policy, cmdPath string) error {
	if err := dropCaps(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	abi, _ := ll.LandlockGetABIVersion()
	if disabled("landlock") {
		abi = 0
	}
	if abi < 1 {
		if p.Level.Filesystem() {
			return errors.New("the kernel has no Landlock: the filesystem cannot be confined")
		}
		return nil
	}
	return landlockThread(abi, p, cmdPath)
}

// abiConfigs are go-landlock's configurations per ABI (index = ABI).
var abiConfigs = []landlock.Config{{}, landlock.V1, landlock.V2, landlock.V3, landlock.V4, landlock.V5, landlock.V6, landlock.V7, landlock.V8, landlock.V9, landlock.V10, landlock.V11}

// Access rights by kind of rule (intersected with what the ABI handles).
const (
	fileRights = ll.AccessFSExecute | ll.AccessFSWriteFile | ll.AccessFSReadFile | ll.AccessFSTruncate | ll.AccessFSIoctlDev
	readRights = ll.AccessFSExecute | ll.AccessFSReadFile | ll.AccessFSReadDir
)

// landlockThread restricts the calling thread alone (go-landlock restricts
// every thread of the process, which would confine the supervisor too).
// Best effort across ABIs: what the kernel's ABI handles is handled. The
// confine entry uses it too, on the thread that then execs the command.
func landlockThread(abi int, p Policy, cmdPath string) error {
	abi = min(abi, len(abiConfigs)-1)
	cfg := abiConfigs[abi]
	attr := ll.RulesetAttr{Scoped: uint64(cfg.Scoped)}
	if p.Level.Filesystem() {
		attr.HandledAccessFS = uint64(cfg.HandledAccessFS)
	} else {
		// A level that leaves the filesystem alone still gets a Landlock
		// domain, for what any domain gives: ptrace, /proc/PID/root and
		// /proc/PID/mem of processes outside the run are refused (below
		// ABI 6, whose scoping would make one anyway), and mounts. It
		// handles only making device nodes, which nothing else allows.
		attr.HandledAccessFS = ll.AccessFSMakeChar | ll.AccessFSMakeBlock
	}
	fd, err := ll.LandlockCreateRuleset(&attr, 0)
	if err != nil {
		return fmt.Errorf("landlock_create_ruleset: %w", err)
	}
	defer unix.Close(fd)
	if p.Level.Filesystem() {
		all := attr.HandledAccessFS
		for _, r := range threadRules(p, cmdPath) {
			if err := addRule(fd, r.path, r.access&all); err != nil {
				return err
			}
		}
	}
	if err := ll.LandlockRestrictSelf(fd, 0); err != nil {
		return fmt.Errorf("landlock_restrict_self: %w", err)
	}
	return nil
}

type pathRule struct {
	path   string
	access uint64
}

// threadRules: read and execute the system and the
// command's install; everything in the workspace, temp dir and --rw
// paths; the usual devices.
func threadRules(p Policy, cmdPath string) []pathRule {
	var out []pathRule
	add := func(access uint64, paths ...string) {
		for _, x := range paths {
			out = append(out, pathRule{x, access})
		}
	}
	add(readRights, SystemRO...)
	add(readRights, p.RO...)
	add(readRights, cmdPath)
	rw := append([]string{p.Workdir}, p.RW...)
	if p.TempDir != "" {
		rw = append(rw, p.TempDir)
	}
	add(^uint64(0), rw...)
	add(fileRights, "/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx")
	add(^uint64(0), "/dev/pts")
	if p.RuntimeDir != "" {
		add(^uint64(0), p.RuntimeDir) // its own, empty
	}
	// The run's own /tmp, /var/tmp and /dev/shm (privateMounts) are
	// writable too, for programs that hard-code them, unless a read-only
	// path was bound back below one: Landlock's rules hold beneath a
	// directory across mount points, so the rule would open that path for
	// writing.
	for _, d := range []string{"/tmp", "/var/tmp", "/dev/shm"} {
		ro := append([]string{cmdPath}, p.RO...)
		if st, err := os.Lstat(d); err == nil && st.IsDir() && !slices.ContainsFunc(ro, func(x string) bool { return within(resolve(x), d) }) {
			add(^uint64(0), d)
		}
	}
	return out
}

// addRule allows access beneath path (files get only file rights);
// missing paths are skipped.
func addRule(ruleset int, path string, access uint64) error {
	fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil // not on this host
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return nil
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		access &= fileRights
	}
	if access == 0 {
		return nil
	}
	if err := ll.LandlockAddPathBeneathRule(ruleset, &ll.PathBeneathAttr{AllowedAccess: access, ParentFd: fd}, 0); err != nil {
		return fmt.Errorf("landlock rule for %s: %w", path, err)
	}
	return nil
}
