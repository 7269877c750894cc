//go:build !linux

package supervisor

import (
	"errors"
	"syscall"
)

// memCgroup is Linux-only; elsewhere memory limits use the RSS watchdog.
type memCgroup struct{}

func newMemCgroup(string, int64) (*memCgroup, error) {
	return nil, errors.New("cgroups are Linux-only")
}

func (c *memCgroup) String() string            { return "none" }
func (c *memCgroup) attr(*syscall.SysProcAttr) {}
func (c *memCgroup) add(int) error             { return nil }
func (c *memCgroup) pids() []int               { return nil }
func (c *memCgroup) oomKills() int             { return 0 }
func (c *memCgroup) remove()                   {}

func MemoryLimitMode() string { return "rss watchdog" }
