package confine

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// nsAttr puts the child in a new user and network namespace. The user
// namespace maps the caller's own ids (root: all ids, one to one), so files
// keep their owners and nothing changes but this: capabilities held in it
// do not reach the host's network, mounts or modules, and the network
// namespace it owns has only a loopback device.
func nsAttr(a *syscall.SysProcAttr) {
	a.Cloneflags |= syscall.CLONE_NEWUSER | syscall.CLONE_NEWNET
	uid, gid := os.Getuid(), os.Getgid()
	if a.Credential != nil {
		uid, gid = int(a.Credential.Uid), int(a.Credential.Gid)
	}
	if os.Geteuid() == 0 {
		// A privileged parent may map every id; root inside then keeps
		// its access to files of every owner.
		a.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		a.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: 0, Size: 1<<32 - 1}}
		return
	}
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	// Not root inside, so exec would drop every capability: keep only
	// CAP_NET_ADMIN across the confine entry's exec, to bring the
	// loopback device up. The entry drops it before the command's exec.
	a.AmbientCaps = append(a.AmbientCaps, unix.CAP_NET_ADMIN)
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
	if err := Probe().Can(p.Level); err != nil {
		return fmt.Errorf("--isolate %s cannot be enforced here: %w", p.Level, err)
	}
	if cmd.SysProcAttr == nil {
		return errors.New("confine: cmd has no SysProcAttr")
	}
	args := make([]string, 0, len(cmd.Args)+4)
	args = append(args, exe, Arg, p.Encode(), cmd.Path)
	cmd.Args = append(args, cmd.Args...)
	cmd.Path = exe
	if p.Level.Network() {
		nsAttr(cmd.SysProcAttr)
	}
	return nil
}
