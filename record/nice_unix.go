//go:build unix

package record

import "syscall"

// lower gives a helper process (git, the interpreter probe) the lowest CPU
// priority: it runs beside the user's runs and must not slow them down.
func lower(pid int) { _ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, 19) }
