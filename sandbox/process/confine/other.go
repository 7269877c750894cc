//go:build !linux

package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// Probe answers that nothing can be enforced here: namespaces and Landlock
// are Linux's. (macOS's sandbox-exec could give the same levels; see
// docs/RATIONALE.md for the mapping. Until it is wired, levels are refused
// rather than run unconfined.)
func Probe() Host {
	why := "Landlock is Linux-only (" + goos + ")"
	return Host{OS: goos, NoLandlock: why, NoUserNS: "network namespaces are Linux-only (" + goos + ")", NoCgroup: "cgroups are Linux-only"}
}

// Wrap refuses every level but none: this platform cannot enforce them.
func Wrap(cmd *exec.Cmd, exe string, p Policy) error {
	if p.Level == None || p.Level == "" {
		return nil
	}
	return fmt.Errorf("--isolate %s cannot be enforced here: %w", p.Level, Probe().Can(p.Level))
}

// Main is never reached off Linux (Wrap refuses first).
func Main(args []string) int {
	fmt.Fprintln(os.Stderr, errors.New("runbox: confinement is not supported on "+goos))
	return 125
}

// InThread is Linux's.
func InThread(Policy) bool { return false }

// StartInThread is Linux's.
func StartInThread(p Policy, _ string, _ func() error) (func(), error) {
	return func() {}, Wrap(nil, "", p)
}

// StartInThreadFrom is Linux's.
func StartInThreadFrom(p Policy, _ string, _ func() func(), _ func() error) (func(), error) {
	return func() {}, Wrap(nil, "", p)
}

// LandlockABI is 0: Landlock is Linux's.
func LandlockABI() int { return 0 }

// OwnUserNS is Linux's.
func OwnUserNS(Level, string) bool { return false }

// SupervisorUserNS is Linux's; never called elsewhere (OwnUserNS).
func SupervisorUserNS(*syscall.SysProcAttr) {}

// Sockets is Linux's.
func Sockets(Level, string) []string { return nil }

// NewSession is Linux's (Wrap refuses confinement elsewhere).
func NewSession(*syscall.SysProcAttr) {}
