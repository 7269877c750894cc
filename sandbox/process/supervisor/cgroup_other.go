//go:build !linux

package supervisor

import (
	"errors"
	"syscall"
)

// runCgroup is Linux-only; elsewhere memory limits use the RSS watchdog
// and a run's processes are found through its session and groups.
type runCgroup struct{ memErr, pidErr, cpuErr error }

func newRunCgroup(string, cgLimits) (*runCgroup, error) {
	return nil, errors.New("cgroups are Linux-only")
}

func (c *runCgroup) memKind() string           { return "none" }
func (c *runCgroup) pidsKind() string          { return "none" }
func (c *runCgroup) cpuKind() string           { return "none" }
func (c *runCgroup) dirs() []string            { return nil }
func (c *runCgroup) attr(*syscall.SysProcAttr) {}
func (c *runCgroup) add(int) error             { return nil }
func (c *runCgroup) pidList() []int            { return nil }
func (c *runCgroup) oomKills() (int, bool)     { return 0, false }
func (c *runCgroup) remove()                   {}

// enter is Linux's (cgroups); never reached: no cgroup is made here.
func (c *runCgroup) enter() (func() error, error) { return func() error { return nil }, nil }
func (c *runCgroup) enforcesMem() bool            { return false }
func (c *runCgroup) enforcesPids() bool           { return false }
func (c *runCgroup) enforcesCPU() bool            { return false }

func MemoryLimitMode() string { return "rss watchdog" }

func PidsLimitMode() string { return "not enforced (no cgroups)" }

func CPULimitMode() string { return "" }
