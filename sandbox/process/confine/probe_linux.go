package confine

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"golang.org/x/sys/unix"
)

var (
	probeOnce sync.Once
	probed    Host
)

// Probe answers what this host can enforce. The namespace check starts a
// real process in a new user and network namespace (once per process: a
// few milliseconds), as the kernel's and distribution's knobs that forbid
// it are many (sysctls, AppArmor, seccomp in a container). DisableEnv is
// read on every call.
func Probe() Host {
	probeOnce.Do(func() { probed = probe() })
	h := probed
	if disabled("landlock") {
		h.LandlockABI, h.NoLandlock = 0, "disabled by "+DisableEnv
	}
	if disabled("userns") {
		h.UserNS, h.NoUserNS = false, "disabled by "+DisableEnv
	}
	return h
}

// LandlockABI is the kernel's Landlock ABI version (0: none, or turned
// off by DisableEnv): one system call, unlike Probe.
func LandlockABI() int {
	if disabled("landlock") {
		return 0
	}
	v, err := ll.LandlockGetABIVersion()
	if err != nil {
		return 0
	}
	return v
}

func probe() Host {
	h := Host{OS: goos}
	if v, err := ll.LandlockGetABIVersion(); err != nil || v < 1 {
		h.NoLandlock = "the kernel has no Landlock (needs Linux 5.13+ with landlock in the lsm= boot list)"
		if err != nil {
			h.NoLandlock += fmt.Sprintf(" (%v)", err)
		}
	} else {
		h.LandlockABI = v
	}
	if err := tryNamespaces(); err != nil {
		h.NoUserNS = err.Error()
	} else {
		h.UserNS = true
	}
	h.CgroupMemory, h.NoCgroup = cgroupMemory()
	return h
}

// tryNamespaces starts /bin/true the way Wrap starts a confined command.
func tryNamespaces() error {
	bin := "/bin/true"
	if _, err := os.Stat(bin); err != nil {
		bin = "/usr/bin/true"
	}
	cmd := exec.Command(bin)
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	nsAttr(cmd.SysProcAttr, true, false)
	err := cmd.Start() // the namespaces are made here, or refused
	if err == nil {
		_ = cmd.Wait() // the caller may reap every child itself
	}
	if err != nil {
		why := "the kernel refused a new user namespace"
		if b, _ := os.ReadFile("/proc/sys/kernel/unprivileged_userns_clone"); strings.TrimSpace(string(b)) == "0" {
			why += " (sysctl kernel.unprivileged_userns_clone=0)"
		} else if b, _ := os.ReadFile("/proc/sys/kernel/apparmor_restrict_unprivileged_userns"); strings.TrimSpace(string(b)) == "1" {
			why += " (AppArmor: kernel.apparmor_restrict_unprivileged_userns=1)"
		} else if b, _ := os.ReadFile("/proc/sys/user/max_user_namespaces"); strings.TrimSpace(string(b)) == "0" {
			why += " (sysctl user.max_user_namespaces=0)"
		}
		return fmt.Errorf("%s: %w", why, err)
	}
	return nil
}

// cgroupMemory reports whether a memory cgroup could be made here (v2
// with the memory controller, or v1's memory hierarchy), writable by this
// user.
func cgroupMemory() (bool, string) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil {
		if !strings.Contains(string(b), "memory") {
			return false, "cgroup v2 without the memory controller"
		}
		if unix.Access("/sys/fs/cgroup", unix.W_OK) != nil {
			return false, "/sys/fs/cgroup is not writable by this user (needs delegation)"
		}
		return true, ""
	}
	if _, err := os.Stat("/sys/fs/cgroup/memory"); err == nil {
		if unix.Access("/sys/fs/cgroup/memory", unix.W_OK) != nil {
			return false, "cgroup v1 memory hierarchy not writable by this user"
		}
		return true, ""
	}
	return false, "no memory cgroup mounted at /sys/fs/cgroup"
}

// resolveUnixABI is the first Landlock ABI that governs connecting to
// pathname unix sockets.
const resolveUnixABI = 9

// socketCandidates are sockets that hand out more than the run may have:
// container engines (a container is the host's root) and the session and
// system buses.
var socketCandidates = []string{
	"/var/run/docker.sock", "/run/docker.sock", "/run/containerd/containerd.sock",
	"/run/podman/podman.sock", "/run/dbus/system_bus_socket",
}

// Sockets lists the sockets a confined run of this user could connect to
// and must not, where Landlock cannot stop it (ABI < 9): those of
// socketCandidates and the user's runtime dir ($XDG_RUNTIME_DIR/docker.sock,
// podman, bus) that exist, this user may write, and lie outside the
// places every confined run gets privately (Scratch, the runtime dir):
// on most hosts none, as they all live in /run. Landlock from ABI 9
// denies them all to a level that confines the filesystem, without masking.
func Sockets(l Level, runtimeDir string) []string {
	if l == None || l == "" || l.Filesystem() && LandlockABI() >= resolveUnixABI {
		return nil
	}
	c := socketCandidates
	if runtimeDir != "" {
		c = append(c[:len(c):len(c)], runtimeDir+"/docker.sock", runtimeDir+"/podman/podman.sock", runtimeDir+"/bus")
	}
	var out []string
	seen := map[string]bool{}
	for _, p := range c {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			p = r // /var/run is often /run: one mask
		}
		if isCovered(p) || runtimeDir != "" && within(p, resolve(runtimeDir)) {
			continue // the run gets an empty tmpfs there (privateMounts)
		}
		st, err := os.Stat(p)
		if seen[p] || err != nil || st.Mode()&os.ModeSocket == 0 || unix.Access(p, unix.W_OK) != nil {
			continue
		}
		seen[p] = true
		out = append(out, p)
	}
	return out
}
