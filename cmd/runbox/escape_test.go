package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	llsyscall "github.com/landlock-lsm/go-landlock/landlock/syscall"
	"github.com/runbox/runbox/internal/testwait"
)

// The adversarial suite (issue 22): each test is an attack a hostile run
// would make, through the real CLI, daemon, supervisor and kernel, at
// every confined level, and the same attack at --isolate none, which must
// reach its target: an attack that fails there proves nothing. The tools
// are real (Debian's openssh-client, tmux, dbus-daemon, util-linux); a
// test whose tools are missing skips, or fails when RUNBOX_REQUIRE_ATTACKS
// is set (CI). The daemon-socket race is attacked in its own test.

var confinedLevels = []string{"net", "fs", "full"}

// needTools skips (or, with RUNBOX_REQUIRE_ATTACKS=1, fails) unless every
// program is installed.
func needTools(t *testing.T, progs ...string) {
	t.Helper()
	needIsolation(t)
	for _, p := range progs {
		if _, err := exec.LookPath(p); err != nil {
			if os.Getenv("RUNBOX_REQUIRE_ATTACKS") == "1" {
				t.Fatalf("%s is not installed (RUNBOX_REQUIRE_ATTACKS=1): install it (see .ci/run, issue 22 block)", p)
			}
			t.Skipf("%s is not installed", p)
		}
	}
}

func needRoot(t *testing.T, why string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root: " + why)
	}
}

// attackEnv is a runbox installation an attack runs through; uid is the
// user its CLI and daemon run as (0: the suite's own).
type attackEnv struct {
	*env
	uid int
	bin string // its runbox binary; "" for the suite's
}

func newAttackEnv(t *testing.T, extra ...string) *attackEnv {
	return &attackEnv{env: newEnv(t, extra...)}
}

// newUnprivEnv is an installation whose CLI and daemon run as uid 65534,
// as a user without root runs runbox: its supervisors confine runs from a
// user namespace of their own.
func newUnprivEnv(t *testing.T) *attackEnv {
	t.Helper()
	needRoot(t, "to start runbox as another user")
	dir, err := os.MkdirTemp("/tmp", "rbxu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	for _, b := range []string{"runbox", "runboxd"} {
		data, err := os.ReadFile(filepath.Join(filepath.Dir(runboxBin), b))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, b), data, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	home, work := filepath.Join(dir, "h"), filepath.Join(dir, "w")
	for _, d := range []string{home, work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, d := range []string{dir, home, work} {
		os.Chmod(d, 0o755)
		os.Chown(d, 65534, 65534)
	}
	e := &env{t: t, home: home, work: work}
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "HOME" && k != "XDG_RUNTIME_DIR" && k != "TMPDIR" && k != "GOCACHE" {
			e.vars = append(e.vars, kv)
		}
	}
	e.vars = append(e.vars, "HOME="+home, "RUNBOX_HOME="+home, "RUNBOX_PLUGINS="+filepath.Join(home, "plugins"), "RUNBOX_NO_DOCKER=1")
	a := &attackEnv{env: e, uid: 65534}
	t.Cleanup(func() { e.killDaemon(syscall.SIGTERM) })
	a.bin = filepath.Join(dir, "runbox")
	return a
}

func (a *attackEnv) runbox() string {
	if a.bin != "" {
		return a.bin
	}
	return runboxBin
}

// runAt runs script with sh at level, through the CLI.
func (a *attackEnv) runAt(level, script string, extra ...string) result {
	a.t.Helper()
	args := append([]string{"run", "--isolate", level}, extra...)
	args = append(args, "--", "/bin/sh", "-c", script)
	var cred *syscall.Credential
	if a.uid != 0 {
		cred = &syscall.Credential{Uid: uint32(a.uid), Gid: uint32(a.uid)}
	}
	return a.runAs(a.runbox(), cred, "", args...)
}

// attempt runs the attack at none, where reached must say it got its
// target, then at each level, where it must not. reached sees the run's
// result and may look at the host too.
func (a *attackEnv) attempt(t *testing.T, script string, reached func(level string, r result) bool, levels ...string) {
	t.Helper()
	if len(levels) == 0 {
		levels = confinedLevels
	}
	if r := a.runAt("none", script); !reached("none", r) {
		t.Fatalf("--isolate none: the attack did not reach its target, so it proves nothing: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	for _, level := range levels {
		if r := a.runAt(level, script); reached(level, r) {
			t.Errorf("--isolate %s: the attack reached its target: exit %d\nstdout: %s\nstderr: %s", level, r.code, r.stdout, r.stderr)
		} else if r.code == 125 {
			t.Errorf("--isolate %s: the run was not started (125): %s", level, r.stderr)
		}
	}
}

func exitedZero(_ string, r result) bool { return r.code == 0 }

// waitPath waits (bounded) for path to appear.
func waitPath(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
	}
}

// serve starts a real host program and stops it when the test ends.
func serve(t *testing.T, uid int, env []string, name string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// tmpDir makes a directory under parent owned by uid.
func tmpDir(t *testing.T, parent, pattern string, uid int) string {
	t.Helper()
	d, err := os.MkdirTemp(parent, pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(d) })
	if uid != 0 {
		os.Chown(d, uid, uid)
	}
	return d
}

// unixServer accepts on a unix socket (a path, or @name for an abstract
// one) and greets every client, as any host service would.
func unixServer(t *testing.T, addr string) {
	t.Helper()
	l, err := net.Listen("unix", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	if !strings.HasPrefix(addr, "@") {
		os.Chmod(addr, 0o777)
	}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			io.WriteString(c, "hello from the host\n")
			c.Close()
		}
	}()
}

// connectScript connects to a unix socket (path or @abstract) with python
// and prints what the server said: exit 0 when connected.
func connectScript(addr string) string {
	return fmt.Sprintf(`/usr/bin/python3 -c '
import socket,sys
a=sys.argv[1]
if a.startswith("@"): a="\0"+a[1:]
s=socket.socket(socket.AF_UNIX); s.settimeout(5); s.connect(a); print("connected", s.recv(64))' %q`, addr)
}

// The user's ssh-agent: through SSH_AUTH_SOCK as the run inherits it, by
// guessing /tmp/ssh-*/agent.*, and with the path passed on purpose
// (--env), a run that reaches it can sign with the user's keys.
func TestAttackSSHAgent(t *testing.T) {
	needTools(t, "ssh-agent", "ssh-add")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			dir := tmpDir(t, "/tmp", "ssh-", a.uid)
			sock := filepath.Join(dir, "agent.4242")
			serve(t, a.uid, os.Environ(), "ssh-agent", "-D", "-a", sock)
			waitPath(t, sock)
			e := a.env(t, "SSH_AUTH_SOCK="+sock)
			// ssh-add -l: 0 lists keys, 1 "no identities" (the agent
			// answered), 2 no agent.
			agent := func(_ string, r result) bool { return r.code == 0 && strings.Contains(r.stdout, "answered") }
			t.Run("SSH_AUTH_SOCK", func(t *testing.T) {
				e.attempt(t, `echo "SSH_AUTH_SOCK=[$SSH_AUTH_SOCK]"; ssh-add -l; [ $? -le 1 ] && echo answered`, agent)
			})
			t.Run("guessed", func(t *testing.T) {
				e.attempt(t, `for s in /tmp/ssh-*/agent.*; do SSH_AUTH_SOCK=$s ssh-add -l; [ $? -le 1 ] && echo answered && exit 0; done; exit 3`, agent)
			})
			t.Run("passed on purpose", func(t *testing.T) {
				for _, level := range confinedLevels {
					r := e.runAt(level, `echo "SSH_AUTH_SOCK=[$SSH_AUTH_SOCK]"; ssh-add -l; [ $? -le 1 ] && echo answered`, "--env", "SSH_AUTH_SOCK="+sock)
					if !strings.Contains(r.stdout, "SSH_AUTH_SOCK=["+sock+"]") {
						t.Errorf("--isolate %s --env SSH_AUTH_SOCK: the run did not get it: %s", level, r.stdout)
					}
					if agent(level, r) {
						t.Errorf("--isolate %s: the agent answered a run that was given its path: %s", level, r.stdout)
					}
					// Given the agent on purpose, socket directory and all.
					r = e.runAt(level, `ssh-add -l; [ $? -le 1 ] && echo answered`, "--env", "SSH_AUTH_SOCK="+sock, "--rw", dir)
					if !agent(level, r) {
						t.Errorf("--isolate %s --env SSH_AUTH_SOCK --rw %s: the agent did not answer: exit %d %s %s", level, dir, r.code, r.stdout, r.stderr)
					}
				}
			})
		})
	}
}

// A tmux server: a run that reaches its socket runs commands outside the
// sandbox (run-shell), here touching a file on the host.
func TestAttackTmux(t *testing.T) {
	needTools(t, "tmux")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			sockDir := tmpDir(t, "/tmp", "tmux-", a.uid)
			os.Chmod(sockDir, 0o700)
			sock := filepath.Join(sockDir, "default")
			// tmux runs the session's command with $SHELL, or else the
			// account's login shell: nobody's is nologin, which exits at
			// once and takes the server with it. CI's environment may have
			// no SHELL at all.
			env := append(os.Environ(), "SHELL=/bin/sh")
			serve(t, a.uid, env, "tmux", "-S", sock, "new-session", "-d", "-s", "victim", "sleep 600")
			waitPath(t, sock)
			// The socket exists from bind, before the server listens and
			// while the session may still be starting: wait until a client
			// finds the session.
			if err := testwait.For("tmux session victim at "+sock, 20*time.Second, func() error {
				out, err := exec.Command("tmux", "-S", sock, "has-session", "-t", "victim").CombinedOutput()
				if err != nil {
					return fmt.Errorf("%w: %s", err, out)
				}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			// The server leaves the client's process group: end it by name.
			t.Cleanup(func() { exec.Command("tmux", "-S", sock, "kill-server").Run() })
			out := tmpDir(t, "/tmp", "rbx-tmux-out-", a.uid)
			marker := filepath.Join(out, "escaped")
			e := a.env(t)
			e.attempt(t, fmt.Sprintf(`tmux -S %s run-shell "touch %s"`, sock, marker), func(level string, r result) bool {
				_, err := os.Stat(marker)
				os.Remove(marker)
				return err == nil
			})
		})
	}
}

// Docker's containerd socket: a run that reaches it is root on the host.
func TestAttackContainerd(t *testing.T) {
	needTools(t, "/usr/bin/python3")
	needRoot(t, "containerd's socket is root's")
	// A socket file a dead containerd left behind is no target: one that
	// answers is (waited for, bounded, as CI starts dockerd beside it).
	var sock string
	err := testwait.For("containerd's socket", testwait.Budget("RUNBOX_REQUIRE_DOCKER"), func() error {
		for _, s := range []string{"/run/containerd/containerd.sock", "/run/docker/containerd/containerd.sock"} {
			if c, err := net.Dial("unix", s); err == nil {
				c.Close()
				sock = s
				return nil
			}
		}
		return errors.New("no containerd socket answers on this host")
	})
	if err != nil {
		if testwait.Required("RUNBOX_REQUIRE_DOCKER") {
			t.Fatalf("%v (RUNBOX_REQUIRE_DOCKER=1)", err)
		}
		t.Skip(err)
	}
	newAttackEnv(t).attempt(t, connectScript(sock), exitedZero)
}

// Any socket in /run, which nobody listed: deny by default.
func TestAttackUnlistedRunSocket(t *testing.T) {
	needTools(t, "/usr/bin/python3")
	needRoot(t, "/run is root's")
	sock := fmt.Sprintf("/run/rbx-attack-%d.sock", os.Getpid())
	unixServer(t, sock)
	t.Cleanup(func() { os.Remove(sock) })
	newAttackEnv(t).attempt(t, connectScript(sock), exitedZero)
}

// A D-Bus session bus in the user's runtime dir: through
// DBUS_SESSION_BUS_ADDRESS, and at its path.
func TestAttackDBusSessionBus(t *testing.T) {
	needTools(t, "dbus-daemon", "dbus-send")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			parent := "/tmp"
			if a.uid == 0 {
				parent = "/run" // where runtime dirs live
			}
			rt := tmpDir(t, parent, "rbx-rt-", a.uid)
			bus := "unix:path=" + rt + "/bus"
			serve(t, a.uid, os.Environ(), "dbus-daemon", "--session", "--nofork", "--nopidfile", "--address="+bus)
			waitPath(t, rt+"/bus")
			e := a.env(t, "DBUS_SESSION_BUS_ADDRESS="+bus, "XDG_RUNTIME_DIR="+rt)
			script := fmt.Sprintf(`echo "bus=[$DBUS_SESSION_BUS_ADDRESS]"; for b in "$DBUS_SESSION_BUS_ADDRESS" "unix:path=$XDG_RUNTIME_DIR/bus" %q; do [ -n "$b" ] && dbus-send --bus="$b" --print-reply --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.ListNames && exit 0; done; exit 3`, bus)
			e.attempt(t, script, func(_ string, r result) bool {
				return r.code == 0 && strings.Contains(r.stdout, "org.freedesktop.DBus")
			})
		})
	}
}

// An abstract unix socket served by a host process: no path to hide; a
// network namespace has its own abstract namespace, and Landlock from
// ABI 6 scopes them at fs.
func TestAttackAbstractSocket(t *testing.T) {
	needTools(t, "/usr/bin/python3")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			addr := fmt.Sprintf("@rbx-attack-%d-%d", os.Getpid(), a.uid)
			unixServer(t, addr)
			levels := confinedLevels
			if v, _ := llsyscall.LandlockGetABIVersion(); v < 6 {
				levels = []string{"net", "full"}
				t.Logf("Landlock ABI %d < 6: --isolate fs reaches the host's abstract sockets (docs/RATIONALE.md)", v)
			}
			a.env(t).attempt(t, connectScript(addr), exitedZero, levels...)
		})
	}
}

// Files written to /tmp, /var/tmp and /dev/shm that would persist on the
// host after the run.
func TestAttackSharedScratchPersists(t *testing.T) {
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			name := fmt.Sprintf("rbx-attack-%d-%d", os.Getpid(), a.uid)
			paths := []string{"/dev/shm/" + name, "/tmp/" + name, "/var/tmp/" + name}
			t.Cleanup(func() {
				for _, p := range paths {
					os.Remove(p)
				}
			})
			script := ""
			for _, p := range paths {
				script += fmt.Sprintf("echo x > %s; ", p)
			}
			a.env(t).attempt(t, script+"true", func(level string, r result) bool {
				found := false
				for _, p := range paths {
					if _, err := os.Stat(p); err == nil {
						found = true
						os.Remove(p)
					} else if level == "none" {
						return false // none must write them all
					}
				}
				return found
			})
		})
	}
}

// victim is a host process of the test's own (the same user as the run),
// working in a directory with a secret in it.
func victim(t *testing.T, uid int) (pid int, secret string) {
	t.Helper()
	dir := tmpDir(t, "/tmp", "rbx-victim-", uid)
	secret = filepath.Join(dir, "secret")
	if err := os.WriteFile(secret, []byte("the host's secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sleep", "600")
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if uid != 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd.Process.Pid, secret
}

// /proc/PID/root and /proc/PID/cwd of a host process lead to the host's
// own mount namespace, past every private mount.
func TestAttackProcRootAndCwd(t *testing.T) {
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			pid, secret := victim(t, a.uid)
			read := func(_ string, r result) bool { return strings.Contains(r.stdout, "the host's secret") }
			t.Run("root", func(t *testing.T) {
				a.env(t).attempt(t, fmt.Sprintf("cat /proc/%d/root%s", pid, secret), read)
			})
			t.Run("cwd", func(t *testing.T) {
				a.env(t).attempt(t, fmt.Sprintf("cat /proc/%d/cwd/secret", pid), read)
			})
		})
	}
}

// ptraceScript attaches to PID (PTRACE_ATTACH, then detaches) or reads
// its memory (process_vm_readv): exit 0 when it could.
const ptraceScript = `/usr/bin/python3 - "$@" <<'PY'
import ctypes,os,sys
libc=ctypes.CDLL(None,use_errno=True)
pid=int(sys.argv[1]); how=sys.argv[2]
if how=="attach":
    if libc.ptrace(16,pid,None,None)!=0: sys.exit("attach: "+os.strerror(ctypes.get_errno()))
    os.waitpid(pid,0); libc.ptrace(17,pid,None,None); print("attached")
else:
    class iov(ctypes.Structure): _fields_=[("base",ctypes.c_void_p),("len",ctypes.c_size_t)]
    addr=int(open("/proc/%d/maps"%pid).readline().split("-")[0],16)
    buf=ctypes.create_string_buffer(16)
    n=libc.process_vm_readv(pid,ctypes.byref(iov(ctypes.addressof(buf),16)),1,ctypes.byref(iov(addr,16)),1,0)
    if n!=16: sys.exit("process_vm_readv: "+os.strerror(ctypes.get_errno()))
    print("read", buf.raw)
PY`

// ptrace and process_vm_readv of a host process (the test's own helper,
// and the daemon): either would let the run act as that process.
func TestAttackPtrace(t *testing.T) {
	needTools(t, "/usr/bin/python3")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			pid, _ := victim(t, a.uid)
			e := a.env(t)
			for _, how := range []string{"attach", "vmread"} {
				t.Run(how, func(t *testing.T) {
					e.attempt(t, fmt.Sprintf("set -- %d %s\n%s", pid, how, ptraceScript), exitedZero)
				})
			}
			t.Run("daemon", func(t *testing.T) {
				e.must0(t)
				e.attempt(t, fmt.Sprintf("set -- %d attach\n%s", e.daemonPID(), ptraceScript), exitedZero)
			})
		})
	}
}

// must0 makes sure the daemon is up (its pid known).
func (a *attackEnv) must0(t *testing.T) {
	t.Helper()
	if r := a.runAt("none", "true"); r.code != 0 || a.daemonPID() == 0 {
		t.Fatalf("no daemon: exit %d %s", r.code, r.stderr)
	}
}

// Signals to a host process: a fresh victim per level, killed at none;
// and signal 0 to the daemon (a probe that would precede a real one).
func TestAttackSignals(t *testing.T) {
	if v, _ := llsyscall.LandlockGetABIVersion(); v < 6 {
		t.Skipf("Landlock ABI %d < 6 does not scope signals: a confined run may signal the user's processes (docs/RATIONALE.md)", v)
	}
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			e := a.env(t)
			for _, level := range append([]string{"none"}, confinedLevels...) {
				pid, _ := victim(t, a.uid)
				r := e.runAt(level, fmt.Sprintf("kill -TERM %d", pid))
				died := false
				for deadline := time.Now().Add(2 * time.Second); !died && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
					var ws syscall.WaitStatus
					wpid, _ := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
					died = wpid == pid
				}
				if level == "none" && !died {
					t.Fatalf("--isolate none: the victim survived (exit %d %s): the attack proves nothing", r.code, r.stderr)
				}
				if level != "none" && died {
					t.Errorf("--isolate %s: the run killed a host process", level)
				}
			}
			e.must0(t)
			e.attempt(t, fmt.Sprintf("kill -0 %d", e.daemonPID()), exitedZero)
		})
	}
}

// A set-user-ID root program run as an ordinary user inside the run: the
// run of an unprivileged daemon runs it as it is; root's run drops to uid
// 65534 with setpriv first (as root in a run may). no_new_privs keeps the
// program's effective uid that user's.
func TestAttackSetuid(t *testing.T) {
	needTools(t, "setpriv")
	needRoot(t, "to make a set-user-ID root program")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			e := a.env(t)
			for d := e.work; d != "/" && d != "/tmp"; d = filepath.Dir(d) {
				os.Chmod(d, 0o755)
			}
			id, err := os.ReadFile("/usr/bin/id")
			if err != nil {
				t.Fatal(err)
			}
			suid := filepath.Join(e.work, "suid-id")
			if err := os.WriteFile(suid, id, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(suid, 0o755|os.ModeSetuid); err != nil {
				t.Fatal(err)
			}
			script := "setpriv --reuid=65534 --regid=65534 --clear-groups ./suid-id -u"
			if e.uid != 0 {
				script = "./suid-id -u"
			}
			e.attempt(t, script, func(_ string, r result) bool {
				return strings.TrimSpace(r.stdout) == "0"
			})
		})
	}
}

// unshare and mount inside the run: a user namespace of its own gives
// the run CAP_SYS_ADMIN there; it must not take its private mounts off
// or enter the host's mount namespace to read a host file in /tmp.
func TestAttackUnshareAndMount(t *testing.T) {
	needTools(t, "unshare", "nsenter")
	for _, a := range attackEnvs(t) {
		t.Run(a.name, func(t *testing.T) {
			dir := tmpDir(t, "/tmp", "rbx-hostfile-", a.uid)
			secret := filepath.Join(dir, "secret")
			os.WriteFile(secret, []byte("the host's secret\n"), 0o644)
			os.Chmod(dir, 0o755)
			script := fmt.Sprintf(`
cat %[1]s 2>/dev/null && exit 0
unshare -rm sh -c 'umount -l /tmp; cat %[1]s' && exit 0
unshare -rm sh -c 'mount -t tmpfs x /mnt && mount --bind / /mnt && cat /mnt%[1]s' && exit 0
nsenter -t 1 -m cat %[1]s && exit 0
exit 3`, secret)
			a.env(t).attempt(t, script, func(_ string, r result) bool { return strings.Contains(r.stdout, "the host's secret") })
		})
	}
}

// A confined run still works: its TMPDIR, its own runtime dir, /tmp
// and /dev/shm are writable, the resolver's configuration readable.
func TestConfinedRunStillWorks(t *testing.T) {
	needIsolation(t)
	e := newAttackEnv(t)
	script := `set -e; echo x > "$TMPDIR/f"; echo x > "$XDG_RUNTIME_DIR/f"; echo x > /dev/shm/f; echo x > /tmp/f; cat /etc/resolv.conf >/dev/null; echo fine`
	for _, level := range confinedLevels {
		if r := e.runAt(level, script); r.code != 0 || !strings.Contains(r.stdout, "fine") {
			t.Errorf("--isolate %s: exit %d\nstdout: %s\nstderr: %s", level, r.code, r.stdout, r.stderr)
		}
	}
}

// namedEnv makes attack environments: as the suite's user, and (as root)
// as an unprivileged one.
type namedEnv struct {
	name string
	uid  int
	env  func(t *testing.T, extra ...string) *attackEnv
}

func attackEnvs(t *testing.T) []namedEnv {
	// uid 0 here means the suite's own user, whoever that is.
	out := []namedEnv{{name: "uid" + strconv.Itoa(os.Getuid()), env: newAttackEnv}}
	if os.Getuid() == 0 {
		out = append(out, namedEnv{name: "uid65534", uid: 65534, env: func(t *testing.T, extra ...string) *attackEnv {
			a := newUnprivEnv(t)
			a.vars = append(a.vars, extra...)
			return a
		}})
	}
	return out
}

// outsideScratch is a temporary directory outside the places a confined
// run gets privately (/tmp, /var/tmp, /dev/shm, /run), where a run sees
// the host's files and Landlock decides: below the current directory, or
// the home when the checkout itself is in /tmp.
func outsideScratch(t *testing.T) string {
	t.Helper()
	home, _ := os.UserHomeDir()
	cwd, _ := os.Getwd()
	for _, parent := range []string{cwd, home} {
		if parent == "" || inScratch(parent) {
			continue
		}
		d, err := os.MkdirTemp(parent, ".runbox-outside-")
		if err != nil {
			continue
		}
		t.Cleanup(func() { os.RemoveAll(d) })
		return d
	}
	t.Skip("no writable directory outside /tmp, /var/tmp, /dev/shm and /run")
	return ""
}

func inScratch(path string) bool {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	for _, s := range []string{"/tmp", "/var/tmp", "/dev/shm", "/run", "/var/run"} {
		if path == s || strings.HasPrefix(path, s+"/") {
			return true
		}
	}
	return false
}
