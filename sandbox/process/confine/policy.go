// Package confine isolates a process run without root or Docker: a new
// network namespace (inside a new user namespace) keeps it off the
// network, Landlock keeps it from reading secrets and from writing outside
// its workspace, and no_new_privs plus Landlock's scoping keep it from
// gaining privileges or signalling processes outside its own tree.
//
// The supervisor applies it to every command it starts (Wrap): the command
// is started as `EXE __confine POLICY PATH ARGV...`, a tiny entry (Main)
// that joins nothing, only restricts itself and then execs the command, so
// the restrictions hold for the command and every process it starts, and
// keep holding whatever happens to the daemon. What this host can enforce
// is Probe's answer; a level the host cannot give is refused, never
// silently weakened.
package confine

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Arg is the argv word of the confine entry: `EXE Arg POLICY PATH ARGV...`.
const Arg = "__confine"

// DisableEnv names a real switch that turns confinement mechanisms off on
// this host, for tests and for hosts where a mechanism misbehaves: a comma
// list of "userns" and "landlock". Probe then reports them unavailable and
// Wrap refuses levels that need them, exactly as on a kernel without them.
const DisableEnv = "RUNBOX_CONFINE_DISABLE"

// Level is how much of the host a process run is kept from.
type Level string

// Levels, from least to most confined.
const (
	None Level = "none" // the host as the user sees it
	Net  Level = "net"  // no network (own network namespace, loopback only)
	FS   Level = "fs"   // Landlock: write only in the workspace, secrets unreadable
	Full Level = "full" // net and fs
)

// Levels lists the levels in order of strength.
var Levels = []Level{None, Net, FS, Full}

// ParseLevel reads a --isolate value; "" is None.
func ParseLevel(s string) (Level, error) {
	if s == "" {
		return None, nil
	}
	l := Level(s)
	if !slices.Contains(Levels, l) {
		return "", fmt.Errorf("unknown isolation level %q (want none, net, fs or full)", s)
	}
	return l, nil
}

// Network reports whether the level cuts the network.
func (l Level) Network() bool { return l == Net || l == Full }

// Filesystem reports whether the level confines the filesystem.
func (l Level) Filesystem() bool { return l == FS || l == Full }

// Covers reports whether l confines at least as much as o.
func (l Level) Covers(o Level) bool {
	return (l.Network() || !o.Network()) && (l.Filesystem() || !o.Filesystem())
}

// Join is the level that confines what either does.
func Join(a, b Level) Level {
	switch n, f := a.Network() || b.Network(), a.Filesystem() || b.Filesystem(); {
	case n && f:
		return Full
	case n:
		return Net
	case f:
		return FS
	}
	return None
}

// WithHostNetwork is l with the network let out (--network host).
func (l Level) WithHostNetwork() Level {
	switch l {
	case Full:
		return FS
	case Net:
		return None
	}
	return l
}

// Policy is what the confine entry enforces for one command.
type Policy struct {
	Level   Level  `json:"level"`
	Workdir string `json:"workdir"`
	// TempDir is the run's private temporary directory (TMPDIR), writable.
	TempDir string `json:"tmp,omitempty"`
	// RW are further writable paths (--rw).
	RW []string `json:"rw,omitempty"`
	// RO are further readable paths: the command's own installation when
	// it lives outside the system directories (a virtualenv, a toolchain).
	RO []string `json:"ro,omitempty"`
	// Mask are sockets hidden from the run (Sockets) outside the places
	// it gets privately: /dev/null is bound over each.
	Mask []string `json:"mask,omitempty"`
	// Cover are runtime dirs ($XDG_RUNTIME_DIR of the run and of the
	// daemon) that get an empty tmpfs when they lie outside Scratch.
	Cover []string `json:"cover,omitempty"`
	// Hide are directories (an empty tmpfs over each) and files
	// (/dev/null over each) the run must not reach at all: runbox's home
	// with its store and daemon socket, and the home's credential and
	// agent directories (HomeHidden), sockets included.
	Hide []string `json:"hide,omitempty"`
	// RuntimeDir is the run's own runtime dir, made empty in its private
	// /run (PrivateRuntimeDir), owned by UID:GID.
	RuntimeDir string `json:"runtime,omitempty"`
	UID        int    `json:"uid,omitempty"`
	GID        int    `json:"gid,omitempty"`
}

// Scratch are the host's shared places where sockets and scratch files
// live: every run above none gets an empty tmpfs of its own over each
// (those that are directories here), so it reaches no socket there (the
// container engines', the system and session buses, tmux, X11, ssh and
// gpg agents, other users') and leaves nothing behind in them.
var Scratch = []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run"}

// homeHidden are, relative to the home directory, what a confined run
// gets an empty directory (or /dev/null) for at every level: credentials
// and the directories where agents and engines put their sockets
// (ssh ControlMaster and agents, gpg-agent, Docker Desktop, Colima,
// Lima, Rancher Desktop, Podman machine).
var homeHidden = []string{
	".ssh", ".gnupg", ".aws", ".kube", ".docker", ".azure", ".netrc", ".pgpass",
	".config/gcloud", ".config/gh", ".git-credentials",
	".colima", ".lima", ".rd", ".local/share/containers/podman/machine",
}

// HomeHidden lists what of home and runboxHome a confined run must not
// reach at all (Policy.Hide): those that exist.
func HomeHidden(home, runboxHome string) []string {
	var out []string
	if home != "" {
		for _, n := range homeHidden {
			if x := filepath.Join(home, n); protoExists(x) {
				out = append(out, x)
			}
		}
	}
	if runboxHome != "" && protoExists(runboxHome) {
		out = append(out, filepath.Clean(runboxHome))
	}
	return out
}

// Encode is the policy as the confine entry's argument.
func (p Policy) Encode() string {
	b, _ := json.Marshal(p) // plain strings: cannot fail
	return string(b)
}

// decodePolicy reads the confine entry's argument.
func decodePolicy(s string) (Policy, error) {
	var p Policy
	if err := json.Unmarshal([]byte(s), &p); err != nil {
		return p, fmt.Errorf("bad policy: %w", err)
	}
	if _, err := ParseLevel(string(p.Level)); err != nil {
		return p, err
	}
	return p, nil
}

// SystemRO are the directories a confined run may read and execute from
// (those missing here are skipped).
var SystemRO = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store", "/snap", "/proc", "/sys", "/run/systemd/resolve"}

// secretNames are, relative to the home directory, what a confined run
// must never read: credentials and browser profiles.
var secretNames = []string{
	".ssh", ".aws", ".gnupg", ".kube", ".docker", ".azure", ".netrc", ".pgpass",
	".config/gcloud", ".config/gh", ".git-credentials",
	".mozilla", ".config/google-chrome", ".config/chromium", ".config/BraveSoftware", "snap/firefox",
	"Library/Application Support/Google/Chrome", "Library/Application Support/Firefox", "Library/Keychains",
}

// Denied lists the paths a confined run must not be able to read: the
// secrets under home and runbox's own home (its store and other runs'
// logs).
func Denied(home, runboxHome string) []string {
	var out []string
	if home != "" {
		for _, n := range secretNames {
			out = append(out, filepath.Join(home, n))
		}
	}
	if runboxHome != "" {
		out = append(out, filepath.Clean(runboxHome))
	}
	return out
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../")
}

// Check refuses a policy that cannot mean what it says: a --rw path that
// does not exist, or a workspace or --rw path that is, or holds, a path in
// denied (it would open the secrets to the run). Paths are compared after
// resolving symlinks, as Landlock sees them.
func (p Policy) Check(denied []string) error {
	if !p.Level.Filesystem() {
		return nil
	}
	for _, rw := range p.RW {
		if !filepath.IsAbs(rw) {
			return fmt.Errorf("--rw %s: not an absolute path", rw)
		}
		if _, err := os.Stat(rw); err != nil {
			return fmt.Errorf("--rw %s: does not exist (create it first, or leave the flag out)", rw)
		}
	}
	check := func(what, path string) error {
		real := resolve(path)
		for _, d := range denied {
			dr := resolve(d)
			switch {
			case within(real, dr):
				return fmt.Errorf("%s %s is inside %s, which a confined run may not read: move the workspace, or run with --isolate none or net", what, path, d)
			case within(dr, real) && protoExists(d):
				return fmt.Errorf("%s %s contains %s, which a confined run may not read: use a project directory below it instead, or run with --isolate none or net", what, path, d)
			}
		}
		return nil
	}
	if err := check("workspace", p.Workdir); err != nil {
		return err
	}
	for _, rw := range p.RW {
		if err := check("--rw", rw); err != nil {
			return err
		}
	}
	return nil
}

func resolve(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

func protoExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// disabled reports whether DisableEnv turns mechanism off.
func disabled(mechanism string) bool {
	for _, m := range strings.Split(os.Getenv(DisableEnv), ",") {
		if strings.TrimSpace(m) == mechanism {
			return true
		}
	}
	return false
}

// HostEnv names variables that point a program at the user's session:
// agents, buses, displays, terminal multiplexers, editors' and engines'
// sockets. A confined run's environment drops them unless they are
// passed on purpose (--env): they name what it must not reach, and with
// a private /tmp and /run they would point nowhere anyway.
var HostEnv = []string{
	"SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO",
	"DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
	"DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET", "XAUTHORITY",
	"TMUX", "TMUX_PANE", "STY", "ZELLIJ", "ZELLIJ_SESSION_NAME", "KITTY_LISTEN_ON",
	"VSCODE_IPC_HOOK", "VSCODE_IPC_HOOK_CLI", "VSCODE_GIT_IPC_HANDLE", "GIT_ASKPASS", "SSH_ASKPASS",
	"DOCKER_HOST", "CONTAINER_HOST", "PULSE_SERVER", "PIPEWIRE_REMOTE",
	"XDG_RUNTIME_DIR",
}

// DropHostEnv removes HostEnv's variables from env, except those named in
// keep (passed on purpose); it returns the new env and the names dropped
// and kept.
func DropHostEnv(env []string, keep map[string]bool) (out, dropped, kept []string) {
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if slices.Contains(HostEnv, k) {
			if !keep[k] {
				dropped = append(dropped, k)
				continue
			}
			kept = append(kept, k)
		}
		out = append(out, kv)
	}
	return out, dropped, kept
}

// PrivateRuntimeDir is the runtime dir ($XDG_RUNTIME_DIR) a confined run
// of uid gets unless its environment names one: /run/user/UID on its own
// /run, empty.
func PrivateRuntimeDir(uid int) string { return "/run/user/" + strconv.Itoa(uid) }
