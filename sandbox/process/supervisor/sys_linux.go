package supervisor

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants (a grandchild whose parent
// exited, or one that called setsid) reparent to the supervisor instead of
// init, so they can still be found, killed and reaped.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// childAttr puts a child in its own process group and kills it if the
// supervisor dies: a run nobody supervises must not keep running.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// childless reports whether this process has no child at all, running or
// zombie. For a subreaper that means no descendant either, so it answers
// in one system call what proc.Descendants answers by reading a file per
// thread of the supervisor.
func childless() bool {
	var info unix.Siginfo
	err := unix.Waitid(unix.P_ALL, 0, &info, unix.WEXITED|unix.WNOHANG|unix.WNOWAIT, nil)
	return errors.Is(err, unix.ECHILD)
}

// reapAny lets the reaper wait for any child: as a subreaper the
// supervisor inherits orphans it never started and must reap them too.
const reapAny = true

// setPipeSize grows a pipe so a fast writer blocks less often; failure
// only costs throughput.
func setPipeSize(f *os.File, size int) {
	_, _ = unix.FcntlInt(f.Fd(), unix.F_SETPIPE_SZ, size)
}

// maxRSS converts rusage maxrss (KiB on Linux) to bytes.
func maxRSS(ru *syscall.Rusage) uint64 { return uint64(ru.Maxrss) * 1024 }

// allocate gives f n bytes of allocated blocks (fallocate, mode 0: the
// size grows and reads as zeros). It fails where the filesystem has no
// fallocate, and on a full disk.
func allocate(f *os.File, n int64) error {
	return unix.Fallocate(int(f.Fd()), 0, 0, n)
}
