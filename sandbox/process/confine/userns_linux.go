package confine

import (
	"os"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// OwnUserNS reports whether a run at level l, started by this (non-root)
// process, is best served by a supervisor in a user namespace of its own
// (SupervisorUserNS): every such level needs a mount namespace
// (privateMounts), a network cut a network namespace too, and only a process
// holding CAP_SYS_ADMIN over its user namespace may make those on a thread
// (InThread). Without it the command goes through the confine entry: the
// same confinement, at the cost of a second binary start per run. Root
// needs no such supervisor; a host without user namespaces cannot have one.
func OwnUserNS(l Level, runtimeDir string) bool {
	return os.Geteuid() != 0 && l != None && l != "" && quickHost().UserNS
}

// SupervisorUserNS makes a supervisor start in a user namespace of its own
// that maps only the caller's ids, one to one: files keep their owners, and
// the capabilities it keeps across exec (CAP_SYS_ADMIN and CAP_NET_ADMIN,
// ambient) hold over that namespace and the network and mount namespaces
// it makes, never over the host's. Each confining thread clears them
// before it forks a command (dropCaps), so no run holds any.
func SupervisorUserNS(a *syscall.SysProcAttr) {
	uid, gid := os.Getuid(), os.Getgid()
	a.Cloneflags |= syscall.CLONE_NEWUSER
	a.UidMappings = []syscall.SysProcIDMap{{ContainerID: uid, HostID: uid, Size: 1}}
	a.GidMappings = []syscall.SysProcIDMap{{ContainerID: gid, HostID: gid, Size: 1}}
	a.GidMappingsEnableSetgroups = false
	a.AmbientCaps = append(a.AmbientCaps, unix.CAP_SYS_ADMIN, unix.CAP_NET_ADMIN)
}

// nsCapable reports whether this process may make network and mount
// namespaces and set them up (loopback, masks): CAP_SYS_ADMIN and
// CAP_NET_ADMIN in its user namespace, as root has, or a supervisor
// started by SupervisorUserNS.
var nsCapable = sync.OnceValue(func() bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	has := func(c int) bool { return data[c/32].Effective&(1<<(c%32)) != 0 }
	return has(unix.CAP_SYS_ADMIN) && has(unix.CAP_NET_ADMIN)
})

func init() { sysAdmin = nsCapable }
