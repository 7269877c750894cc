package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// nsAttr puts the child in a new network namespace (net) and/or mount
// namespace (mnt, for privateMounts), inside a new user namespace unless
// root can do without. The user namespace maps the caller's own ids (root:
// all ids, one to one), so files keep their owners and nothing changes but
// this: capabilities held in it do not reach the host's network, mounts or
// modules, and the network namespace it owns has only a loopback device.
func nsAttr(a *syscall.SysProcAttr, net, mnt bool) {
	if net {
		a.Cloneflags |= syscall.CLONE_NEWNET
	}
	if mnt {
		a.Cloneflags |= syscall.CLONE_NEWNS
	}
	uid, gid := os.Getuid(), os.Getgid()
	if a.Credential != nil {
		uid, gid = int(a.Credential.Uid), int(a.Credential.Gid)
	}
	if os.Geteuid() == 0 {
		if !net {
			return // root makes a mount namespace of its own
		}
		a.Cloneflags |= syscall.CLONE_NEWUSER
		// A privileged parent may map every id; root inside then keeps
		// its access to files of every owner.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		return
	}
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// Not root inside, so exec would drop every capability: keep only
	// CAP_NET_ADMIN (to bring the loopback device up) and CAP_SYS_ADMIN
	// (for its private mounts) across the confine entry's exec. The entry drops
	// them before the command's exec.
	if net {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
	}
	if mnt {
		a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN)
	}
}

// NewSession puts a confined command in a session of its own instead of
// a process group: it has no controlling terminal, so it cannot push
// input into one it was handed (TIOCSTI) or be stopped by one. (A session
// leader is its own process group too; setpgid would then fail.)
func NewSession(a *syscall.SysProcAttr) {
	a.Setpgid, a.Pgid = false, 0
	a.Setsid = true
	a.Setctty = false
}

// Wrap makes cmd start confined by p: through exe's confine entry, in new
// namespaces when p cuts the network. exe is a binary whose main hands
// `Arg ...` to Main (the runbox binary; a test binary through
// supervisortest). cmd.SysProcAttr must be set already. A level this host
// cannot enforce is an error, never a weaker run.
func Wrap(cmd *exec.Cmd, exe string, p Policy) error {
	if p.Level == None || p.Level == "" {
		return nil
	}
	if err := quickHost().Can(p.Level); err != nil {
		return fmt.Errorf("--isolate %s cannot be enforced here: %w", p.Level, err)
	}
	if cmd.SysProcAttr == nil {
		return errors.New("confine: cmd has no SysProcAttr")
	}
	args := make([]string, 0, len(cmd.Args)+4)
	args = append(args, exe, Arg, p.Encode(), cmd.Path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = exe
	nsAttr(cmd.SysProcAttr, p.Level.Network(), true)
	NewSession(cmd.SysProcAttr)
	return nil
}
