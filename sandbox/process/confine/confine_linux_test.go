package confine

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// The test binary doubles as the confine entry (as the runbox binary does)
// and as a helper that makes one system call and says how it went, so the
// tests see the kernel's own answer inside a confined process.
const helperEnv = "RUNBOX_CONFINE_TEST_HELPER"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == Arg {
		os.Exit(Main(os.Args[2:]))
	}
	if h := os.Getenv(helperEnv); h != "" {
		os.Exit(helper(h, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// helper does one thing and prints "ok" or the error.
func helper(what string, args []string) int {
	var err error
	switch what {
	case "connect":
		var c net.Conn
		if c, err = net.Dial("tcp", args[0]); err == nil {
			c.Close()
		}
	case "unix":
		var c net.Conn
		if c, err = net.Dial("unix", args[0]); err == nil {
			c.Close()
		}
	case "unmask": // take the mask off, then connect
		if err = syscall.Unmount(args[0], syscall.MNT_DETACH); err == nil {
			var c net.Conn
			if c, err = net.Dial("unix", args[0]); err == nil {
				c.Close()
			}
		}
	case "selfloop": // a server of its own on loopback still works
		var l net.Listener
		if l, err = net.Listen("tcp", "127.0.0.1:0"); err == nil {
			var c net.Conn
			if c, err = net.Dial("tcp", l.Addr().String()); err == nil {
				c.Close()
			}
			l.Close()
		}
	case "write":
		err = os.WriteFile(args[0], []byte("x"), 0o644)
	case "read":
		_, err = os.ReadFile(args[0])
	case "kill":
		pid, _ := strconv.Atoi(args[0])
		err = syscall.Kill(pid, syscall.SIGTERM)
	case "tiocsti": // push a command into the terminal on stdin
		for _, c := range []byte("id\n") {
			if err = unix.IoctlSetPointerInt(0, unix.TIOCSTI, int(c)); err != nil {
				break
			}
		}
	case "nnp":
		b, _ := os.ReadFile("/proc/self/status")
		if !strings.Contains(string(b), "NoNewPrivs:\t1") {
			err = errors.New("no_new_privs not set")
		}
	case "spawn": // a grandchild inherits it all: run the helper again
		cmd := exec.Command(os.Args[0], args[1:]...)
		cmd.Env = append(os.Environ(), helperEnv+"="+args[0])
		out, _ := cmd.CombinedOutput()
		fmt.Print(string(out))
		return 0
	case "launch": // as another user: confine and run the rest
		p, _ := decodePolicy(args[0])
		cmd := exec.Command(os.Args[0], args[2:]...)
		cmd.Env = append(os.Environ(), helperEnv+"="+args[1])
		cmd.SysProcAttr = &syscall.SysProcAttr{}
		if err := Wrap(cmd, os.Args[0], p); err != nil {
			fmt.Println(err)
			return 0
		}
		out, _ := cmd.CombinedOutput()
		fmt.Print(string(out))
		return 0
	}
	if err != nil {
		fmt.Println(err)
	} else {
		fmt.Println("ok")
	}
	return 0
}

// confined runs the helper as `what args...` under p and returns what it
// printed: through the confine entry (Wrap) and, where p allows it, also
// from a confined thread of this process (StartInThread); the two must
// agree.
func confined(t *testing.T, p Policy, what string, args ...string) string {
	t.Helper()
	out := confinedEntry(t, p, what, args...)
	if InThread(p) {
		if th := confinedThread(t, p, what, args...); th != out {
			t.Errorf("%s %v under %s: the confine entry says %q, a confined thread %q", what, args, p.Level, out, th)
		}
	}
	return out
}

func confinedThread(t *testing.T, p Policy, what string, args ...string) string {
	t.Helper()
	exe, _ := os.Executable()
	if p.Level.Filesystem() {
		p.RO = append(p.RO, filepath.Dir(exe))
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+what)
	var buf strings.Builder
	cmd.Stdout, cmd.Stderr = &buf, &buf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	release, err := StartInThread(p, exe, cmd.Start)
	if err != nil {
		t.Fatalf("StartInThread: %v", err)
	}
	defer release()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%s %v in a confined thread: %v\n%s", what, args, err, buf.String())
	}
	// This process is not confined: only the thread was.
	if p.Level.Filesystem() {
		if err := os.WriteFile(filepath.Join(t.TempDir(), "free"), nil, 0o644); err != nil {
			t.Errorf("the test process itself got confined: %v", err)
		}
	}
	return strings.TrimSpace(buf.String())
}

func confinedEntry(t *testing.T, p Policy, what string, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if p.Level.Filesystem() {
		p.RO = append(p.RO, filepath.Dir(exe))
	}
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+what)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := Wrap(cmd, exe, p); err != nil {
		t.Fatalf("Wrap: %v", err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", what, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func need(t *testing.T, l Level) {
	t.Helper()
	if err := Probe().Can(l); err != nil {
		t.Skipf("this host cannot enforce %s: %v", l, err)
	}
}

func TestNetworkLevels(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	addr := l.Addr().String()
	for _, tt := range []struct {
		level   Level
		reaches bool
	}{{None, true}, {FS, true}, {Net, false}, {Full, false}} {
		t.Run(string(tt.level), func(t *testing.T) {
			need(t, tt.level)
			p := Policy{Level: tt.level, Workdir: t.TempDir()}
			out := confined(t, p, "connect", addr)
			if (out == "ok") != tt.reaches {
				t.Errorf("connect to the host's %s under %s: %q, want reached=%v", addr, tt.level, out, tt.reaches)
			}
			if tt.level.Network() {
				if out := confined(t, p, "selfloop"); out != "ok" {
					t.Errorf("a server of the run's own on loopback: %q, want ok", out)
				}
			}
		})
	}
}

// hostDir is a temporary directory outside the places a confined run gets
// privately (Scratch), so a run sees it as the host has it and only
// Landlock decides: below the current directory, or the home when the
// checkout itself is in /tmp.
func hostDir(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	for _, parent := range []string{cwd, home} {
		if parent == "" || isCovered(resolve(parent)) {
			continue
		}
		d, err := os.MkdirTemp(parent, ".confine-test-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("no writable directory outside /tmp, /var/tmp, /dev/shm and /run")
	return ""
}

func TestFilesystemLevel(t *testing.T) {
	need(t, FS)
	ws, outside, extra := t.TempDir(), hostDir(t), t.TempDir()
	home := hostDir(t)
	if err := os.MkdirAll(filepath.Join(home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(home, ".ssh", "id_ed25519")
	if err := os.WriteFile(key, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := Policy{Level: FS, Workdir: ws, RW: []string{extra}}
	denied := "permission denied"
	for _, tt := range []struct {
		name, what, path, want string
	}{
		{"write in workspace", "write", filepath.Join(ws, "f"), "ok"},
		{"write in --rw path", "write", filepath.Join(extra, "f"), "ok"},
		{"write outside", "write", filepath.Join(outside, "f"), denied},
		{"write a system dir", "write", "/etc/runbox-confine-test", denied},
		{"read a system file", "read", "/etc/passwd", "ok"},
		{"read an ssh key", "read", key, denied},
		{"no new privileges", "nnp", "", "ok"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out := confined(t, p, tt.what, tt.path)
			if !strings.Contains(out, tt.want) {
				t.Errorf("%s %s: %q, want %q", tt.what, tt.path, out, tt.want)
			}
		})
	}
	t.Run("real ssh keys", func(t *testing.T) {
		real, _ := os.UserHomeDir()
		keys, _ := filepath.Glob(filepath.Join(real, ".ssh", "id_*"))
		if len(keys) == 0 {
			t.Skip("no ~/.ssh/id_* on this host")
		}
		if out := confined(t, p, "read", keys[0]); !strings.Contains(out, denied) {
			t.Errorf("read %s: %q, want %q", keys[0], out, denied)
		}
	})
	t.Run("a child inherits it", func(t *testing.T) {
		out := confined(t, p, "spawn", "write", filepath.Join(outside, "g"))
		if !strings.Contains(out, denied) {
			t.Errorf("grandchild writing outside: %q, want %q", out, denied)
		}
		if out := confined(t, p, "spawn", "write", filepath.Join(ws, "g")); out != "ok" {
			t.Errorf("grandchild writing in the workspace: %q, want ok", out)
		}
	})
	if _, err := os.Stat(filepath.Join(outside, "f")); err == nil {
		t.Error("a file was written outside the workspace")
	}
}

func TestSignalsStayInTheTree(t *testing.T) {
	need(t, Net)
	if Probe().LandlockABI < signalScopeABI {
		t.Skipf("Landlock ABI %d does not scope signals", Probe().LandlockABI)
	}
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { victim.Process.Kill(); victim.Wait() }()
	pid := strconv.Itoa(victim.Process.Pid)
	if out := confined(t, Policy{Level: Net, Workdir: t.TempDir()}, "kill", pid); !strings.Contains(out, "operation not permitted") {
		t.Errorf("confined kill of an outside process: %q, want operation not permitted", out)
	}
	if out := confined(t, Policy{Level: None, Workdir: t.TempDir()}, "kill", pid); out != "ok" {
		t.Errorf("unconfined kill: %q, want ok (the test's victim must be killable)", out)
	}
}

// TestUnprivilegedUser runs the whole confinement as an ordinary user (the
// suite runs as root on CI): the confining process itself is started as
// uid 65534, so Wrap takes the unprivileged path (a user namespace that
// maps only that uid, CAP_NET_ADMIN lent across one exec for loopback).
func TestUnprivilegedUser(t *testing.T) {
	if os.Getuid() != 0 {
		t.Skip("needs root to start a process as another user; as non-root the other tests already take this path")
	}
	need(t, Full)
	dir, err := os.MkdirTemp("/tmp", "confine-unpriv-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	exe, _ := os.Executable()
	bin := filepath.Join(dir, "confine.test")
	b, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, b, 0o755); err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, ws} {
		os.Chmod(p, 0o755)
		os.Chown(p, 65534, 65534)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	sock := filepath.Join(dir, "s.sock")
	sl, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer sl.Close()
	os.Chmod(sock, 0o777)
	p := Policy{Level: Full, Workdir: ws, RO: []string{dir}}
	run := func(args ...string) string {
		cmd := exec.Command(bin, append([]string{p.Encode()}, args...)...)
		cmd.Env = append(os.Environ(), helperEnv+"=launch")
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if out := run("connect", l.Addr().String()); out == "ok" {
		t.Error("an unprivileged confined run reached the host's loopback server")
	}
	if out := run("selfloop"); out != "ok" {
		t.Errorf("unprivileged run's own loopback: %q, want ok", out)
	}
	if out := run("write", filepath.Join(ws, "f")); out != "ok" {
		t.Errorf("unprivileged write in the workspace: %q, want ok", out)
	}
	if out := run("write", filepath.Join(dir, "f")); !strings.Contains(out, "permission denied") {
		t.Errorf("unprivileged write outside the workspace: %q, want permission denied", out)
	}
	if out := run("nnp"); out != "ok" {
		t.Errorf("unprivileged no_new_privs: %q", out)
	}
	go func() {
		for {
			c, err := sl.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	if out := run("unix", sock); out != "ok" {
		t.Errorf("unprivileged, unmasked socket: %q, want ok", out)
	}
	p.Mask = []string{sock}
	if out := run("unix", sock); out == "ok" {
		t.Error("unprivileged: a masked socket was reachable")
	}
}

func TestDisableSwitchRefuses(t *testing.T) {
	for _, tt := range []struct {
		off   string
		level Level
		want  string
	}{
		{"landlock", FS, "no filesystem isolation: disabled by " + DisableEnv},
		{"userns", Net, "no network isolation: disabled by " + DisableEnv},
		{"userns,landlock", Full, "no network isolation"},
	} {
		t.Run(tt.off, func(t *testing.T) {
			t.Setenv(DisableEnv, tt.off)
			cmd := exec.Command("/bin/true")
			cmd.SysProcAttr = &syscall.SysProcAttr{}
			err := Wrap(cmd, "/bin/false", Policy{Level: tt.level, Workdir: t.TempDir()})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Wrap with %s=%s: %v, want an error containing %q", DisableEnv, tt.off, err, tt.want)
			}
			if cmd.Path != "/bin/true" {
				t.Errorf("a refused Wrap changed the command to %s", cmd.Path)
			}
		})
	}
}

// TestMaskedSockets: where Landlock cannot deny connecting to a pathname
// socket (ABI < 9), the sockets in Policy.Mask are hidden in the run's own
// mount namespace, for every level.
func TestMaskedSockets(t *testing.T) {
	dir, err := os.MkdirTemp("/tmp", "confine-sock-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "engine.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	for _, level := range []Level{Net, FS, Full} {
		t.Run(string(level), func(t *testing.T) {
			need(t, level)
			ws := t.TempDir()
			if out := confined(t, Policy{Level: level, Workdir: ws, RW: []string{dir}}, "unix", sock); out != "ok" && !level.Filesystem() {
				t.Fatalf("unmasked socket under %s: %q, want ok (the test's server must be reachable)", level, out)
			}
			out := confined(t, Policy{Level: level, Workdir: ws, RW: []string{dir}, Mask: []string{sock}}, "unix", sock)
			if out == "ok" {
				t.Errorf("a masked socket was reachable under %s", level)
			}
			// Root in the run (as here when the tests run as root) has
			// lost CAP_SYS_ADMIN, and Landlock forbids mounts: the mask
			// stays on.
			if out := confined(t, Policy{Level: level, Workdir: ws, RW: []string{dir}, Mask: []string{sock}}, "unmask", sock); out == "ok" {
				t.Errorf("the run took the mask off under %s", level)
			}
		})
	}
	// The mask stayed in the run's namespace.
	if c, err := net.Dial("unix", sock); err != nil {
		t.Errorf("the socket is masked outside the run too: %v", err)
	} else {
		c.Close()
	}
}

// TestNoTerminalInjection: a run handed a terminal (its stdin a pty that
// would be its controlling terminal) cannot push input into it with
// TIOCSTI, the way a hostile program types commands into the user's shell:
// a confined command starts in a session of its own (NewSession), without
// a controlling terminal, and without CAP_SYS_ADMIN. Unconfined, the same
// attempt succeeds.
func TestNoTerminalInjection(t *testing.T) {
	exe, _ := os.Executable()
	for _, level := range Levels {
		t.Run(string(level), func(t *testing.T) {
			need(t, level)
			ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|unix.O_NOCTTY, 0)
			if err != nil {
				t.Skipf("no ptys: %v", err)
			}
			defer ptmx.Close()
			if err := unix.IoctlSetPointerInt(int(ptmx.Fd()), unix.TIOCSPTLCK, 0); err != nil {
				t.Fatal(err)
			}
			n, err := unix.IoctlGetInt(int(ptmx.Fd()), unix.TIOCGPTN)
			if err != nil {
				t.Fatal(err)
			}
			tty, err := os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|unix.O_NOCTTY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer tty.Close()
			p := Policy{Level: level, Workdir: t.TempDir(), RO: []string{filepath.Dir(exe)}}
			cmd := exec.Command(exe)
			cmd.Env = append(os.Environ(), helperEnv+"=tiocsti")
			cmd.Stdin = tty
			var buf strings.Builder
			cmd.Stdout, cmd.Stderr = &buf, &buf
			cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
			if err := Wrap(cmd, exe, p); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, buf.String())
			}
			out := strings.TrimSpace(buf.String())
			if level == None && out != "ok" {
				t.Fatalf("unconfined TIOCSTI: %q, want ok (the attack must reach its target there)", out)
			}
			if level != None && out == "ok" {
				t.Errorf("--isolate %s: the run pushed input into its terminal", level)
			}
		})
	}
}

// TestHiddenDirs: the home's credential and agent directories and runbox's
// home (Policy.Hide) are empty for a run at every level, net included,
// where Landlock leaves reads alone: one outside every private place, and
// one inside the workspace, which is bound back into the run's /tmp.
func TestHiddenDirs(t *testing.T) {
	ws := t.TempDir()
	inWS := filepath.Join(ws, "home", ".ssh")
	outside := filepath.Join(hostDir(t), ".gnupg")
	for _, d := range []string{inWS, outside} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "key"), []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, level := range Levels {
		t.Run(string(level), func(t *testing.T) {
			need(t, level)
			p := Policy{Level: level, Workdir: ws, Hide: []string{inWS, outside}}
			for _, d := range []string{inWS, outside} {
				out := confined(t, p, "read", filepath.Join(d, "key"))
				if level == None && out != "ok" {
					t.Fatalf("unconfined read of %s: %q, want ok", d, out)
				}
				if level != None && out == "ok" {
					t.Errorf("--isolate %s read %s/key", level, d)
				}
			}
			if level != None {
				if out := confined(t, p, "write", filepath.Join(ws, "f")); out != "ok" {
					t.Errorf("--isolate %s: the workspace is not writable: %q", level, out)
				}
			}
		})
	}
}
