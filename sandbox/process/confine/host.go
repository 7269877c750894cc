package confine

import (
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"strings"
)

// Host is what confinement this machine can enforce, and why not where it
// cannot.
type Host struct {
	OS string `json:"os"`
	// LandlockABI is the kernel's Landlock ABI version; 0 when Landlock
	// is unavailable (NoLandlock says why).
	LandlockABI int    `json:"landlock_abi"`
	NoLandlock  string `json:"no_landlock,omitempty"`
	// UserNS: a new user and network namespace can be made (NoUserNS
	// says why not).
	UserNS   bool   `json:"userns"`
	NoUserNS string `json:"no_userns,omitempty"`
	// CgroupMemory: a memory cgroup can be made for the run (else the
	// supervisor's RSS watchdog enforces --memory).
	CgroupMemory bool   `json:"cgroup_memory"`
	NoCgroup     string `json:"no_cgroup,omitempty"`
}

// signalScopeABI is the first Landlock ABI that scopes signals (and
// abstract unix sockets) to the sandbox's own domain.
const signalScopeABI = 6

// Can says why the host cannot enforce l (nil: it can).
func (h Host) Can(l Level) error {
	var why []string
	if l.Network() && !h.UserNS {
		why = append(why, "no network isolation: "+h.NoUserNS)
	}
	if l.Filesystem() && h.LandlockABI < 1 {
		why = append(why, "no filesystem isolation: "+h.NoLandlock)
	}
	if l.Filesystem() && !l.Network() && !h.mountNS() {
		why = append(why, "no private /tmp, /run and runtime dir (without root, a mount namespace needs a user namespace): "+h.NoUserNS)
	}
	if len(why) == 0 {
		return nil
	}
	return errors.New(strings.Join(why, "; "))
}

// Best is the strongest level up to want that the host can enforce.
func (h Host) Best(want Level) Level {
	n := want.Network() && h.UserNS
	f := want.Filesystem() && h.LandlockABI >= 1 && h.mountNS()
	switch {
	case n && f:
		return Full
	case n:
		return Net
	case f:
		return FS
	}
	return None
}

// mountNS reports whether a confined run can get a mount namespace of its
// own (privateMounts): a process with CAP_SYS_ADMIN (root, outside a
// container that took it away) makes one, anyone else inside a user
// namespace.
func (h Host) mountNS() bool { return h.UserNS || sysAdmin() }

// sysAdmin reports whether this process may make mount namespaces itself
// (Linux: nsCapable).
var sysAdmin = func() bool { return false }

// NetworkLine says what a run at level l gets for a network.
func (h Host) NetworkLine(l Level) string {
	if !l.Network() {
		return "host network (not isolated)"
	}
	return "none — own network namespace, loopback only"
}

// FilesystemLine says what a run at level l may touch.
func (h Host) FilesystemLine(l Level) string {
	if l == None || l == "" {
		return "host filesystem as the user (not isolated)"
	}
	if !l.Filesystem() {
		return "host filesystem as the user, but private empty /tmp, /var/tmp, /dev/shm, /run and runtime dir; home secrets and runbox's home hidden"
	}
	return fmt.Sprintf("Landlock ABI %d — writable: workspace, its temp dir, --rw paths and its own empty /tmp, /var/tmp, /dev/shm and runtime dir; readable: system dirs and the command's install; its own empty /run; home secrets and runbox's home hidden", h.LandlockABI)
}

// ProcessLine says what keeps a confined run from other processes.
func (h Host) ProcessLine(l Level) string {
	if l == None {
		return "not confined"
	}
	if h.LandlockABI >= signalScopeABI {
		return "own session (no controlling terminal); no new privileges; signals, ptrace and abstract unix sockets limited to its own tree (Landlock scoping)"
	}
	if h.LandlockABI >= 1 {
		return "own session (no controlling terminal); no new privileges; ptrace limited to its own tree (Landlock); signals and abstract unix sockets not scoped (Landlock ABI < 6)"
	}
	return "own session (no controlling terminal); no new privileges; signals and ptrace not scoped (no Landlock)"
}

// Info is the host's answer for `runbox backends`.
func (h Host) Info() map[string]string {
	m := map[string]string{}
	if h.LandlockABI > 0 {
		m["landlock"] = "ABI " + strconv.Itoa(h.LandlockABI)
	} else {
		m["landlock"] = "unavailable: " + h.NoLandlock
	}
	if h.UserNS {
		m["user_namespaces"] = "available (network isolation)"
	} else {
		m["user_namespaces"] = "unavailable: " + h.NoUserNS
	}
	if h.CgroupMemory {
		m["cgroup_memory"] = "available"
	} else {
		m["cgroup_memory"] = "unavailable: " + h.NoCgroup
	}
	m["isolation_levels"] = string(h.Best(Full))
	if h.Best(Full) != Full {
		m["isolation_levels"] += " at most (" + h.Can(Full).Error() + ")"
	}
	return m
}

var goos = runtime.GOOS

// Summary is one line for the run's log: what level l enforces here.
func (h Host) Summary(l Level) string {
	var parts []string
	if l.Network() {
		parts = append(parts, "no network (loopback only)")
	}
	if l.Filesystem() {
		parts = append(parts, fmt.Sprintf("writable only: workspace, $TMPDIR, --rw paths and its own /tmp, /dev/shm and runtime dir (Landlock ABI %d)", h.LandlockABI))
	}
	if l != None {
		parts = append(parts, "private /tmp, /var/tmp, /dev/shm, /run and runtime dir; home secrets and runbox's home hidden")
		p := "no new privileges"
		if h.LandlockABI >= signalScopeABI {
			p += ", signals and abstract sockets scoped to the run"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, "; ")
}
