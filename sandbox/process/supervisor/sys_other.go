//go:build !linux

package supervisor

import (
	"errors"
	"os"
	"syscall"
)

// becomeSubreaper is Linux-only; elsewhere an orphan that left the process
// group reparents to init and only the group kill reaches it.
func becomeSubreaper() error { return nil }

func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// childless is Linux's shortcut for "proc.Descendants is empty";
// elsewhere the tree is always walked.
func childless() bool { return false }

func setPipeSize(*os.File, int) {}

// reapAny is false without a subreaper: only registered children are ours
// to wait for (gopsutil may run ps(1) in this process on darwin).
const reapAny = false

// maxRSS converts rusage maxrss (bytes on darwin) to bytes.
func maxRSS(ru *syscall.Rusage) uint64 { return uint64(ru.Maxrss) }

// allocate is Linux's (fallocate); elsewhere the reserve is written.
func allocate(*os.File, int64) error { return errors.ErrUnsupported }
