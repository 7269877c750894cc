package supervisor

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/runbox/runbox/sandbox/process/confine"
)

// confine makes cmd start confined as the spec's Isolate says (package
// confine), and returns how to start it. The restrictions are applied
// before the command's exec, in what forks it (a dedicated thread of this
// process, confine.InThread) or in what execs it (this binary's confine
// entry, for a network cut without root), so they hold for every process
// of the run whatever happens to the daemon. A run that confines the
// filesystem gets a private temporary directory (TMPDIR); undo removes it
// once the step is over. A level that cannot be enforced ends the run as
// a sandbox error (125) before anything runs.
func (s *supervisor) confine(cmd *exec.Cmd) (undo func(), start func() (<-chan exitStatus, int, error), err error) {
	start = func() (<-chan exitStatus, int, error) { return s.spawn(cmd) }
	undo, err = s.confineCmd(cmd, &start)
	return undo, start, err
}

func (s *supervisor) confineCmd(cmd *exec.Cmd, start *func() (<-chan exitStatus, int, error)) (undo func(), err error) {
	undo = func() {}
	level, err := confine.ParseLevel(s.spec.Isolate)
	if err != nil || level == confine.None {
		return undo, confineError(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return undo, confineError(fmt.Errorf("find the runbox binary for --isolate: %w", err))
	}
	// The run's runtime dir is made empty and its own: where its
	// environment says (a --env given on purpose), else /run/user/UID.
	rt, _ := envValue(cmd.Env, "XDG_RUNTIME_DIR")
	runtimeDir := rt
	if !filepath.IsAbs(runtimeDir) {
		runtimeDir = confine.PrivateRuntimeDir(os.Getuid())
		cmd.Env = append(cmd.Env, "XDG_RUNTIME_DIR="+runtimeDir)
	}
	home, _ := os.UserHomeDir()
	p := confine.Policy{
		Level: level, Workdir: s.spec.Workdir, RW: s.spec.RW, RO: installDirs(cmd.Path),
		Mask:       confine.Sockets(level, rt),
		Cover:      []string{rt, os.Getenv("XDG_RUNTIME_DIR")},
		Hide:       confine.HomeHidden(home, runboxHome(s.spec.StateDir)),
		RuntimeDir: runtimeDir,
		UID:        os.Getuid(), GID: os.Getgid(),
	}
	// The daemon's socket, wherever RUNBOX_SOCKET put it, unless that is
	// in the workspace or a --rw path, which are the run's to reach (the
	// daemon's peer check still refuses a confined client there).
	if sock := os.Getenv("RUNBOX_SOCKET"); sock != "" && !inAny(sock, append([]string{s.spec.Workdir}, s.spec.RW...)) {
		p.Mask = append(p.Mask, sock)
	}
	if level.Filesystem() {
		if err := p.Check(confine.Denied(home, "")); err != nil {
			return undo, confineError(err)
		}
	}
	// The run's own temporary directory (TMPDIR), on disk, bound into
	// its private /tmp: the host's /tmp is not the run's.
	tmp, err := os.MkdirTemp("", "runbox-"+safeName(s.spec.RunID)+"-")
	if err != nil {
		return undo, confineError(fmt.Errorf("temp dir: %w", err))
	}
	p.TempDir = tmp
	undo = func() { os.RemoveAll(tmp) }
	cmd.Env = append(cmd.Env, "TMPDIR="+tmp)
	// A session of its own: no controlling terminal to inject into.
	confine.NewSession(cmd.SysProcAttr)
	if confine.InThread(p) {
		var release func()
		*start = func() (ch <-chan exitStatus, pid int, err error) {
			var startErr error // the command's own: a shell-like 126/127
			// The thread enters the run's cgroup before it confines
			// itself (after, it may no longer reach the cgroup files) and
			// leaves once the command is forked (spawn, enterCgroup).
			var leave func()
			release, err = confine.StartInThreadFrom(p, cmd.Path, func() func() {
				leave = s.enterCgroup()
				return leave
			}, func() error {
				ch, pid, startErr = s.reaper.start(cmd)
				leave()
				return startErr
			})
			if err != nil && startErr == nil {
				err = confineError(err)
			}
			return ch, pid, err
		}
		rmTmp := undo
		undo = func() {
			if release != nil {
				release()
			}
			rmTmp()
		}
	} else if err := confine.Wrap(cmd, exe, p); err != nil {
		undo()
		return func() {}, confineError(err)
	}
	hid := ""
	if len(p.Mask)+len(p.Hide) > 0 {
		hid = "; hid " + strings.Join(append(p.Mask, p.Hide...), ", ")
	}
	s.note("isolate %s: %s%s", level, confine.Host{LandlockABI: confine.LandlockABI()}.Summary(level), hid)
	return undo, nil
}

// runboxHome is runbox's own home, from a run's state dir
// (HOME/runs/ID/sandbox); "" when the state dir is not laid out so.
func runboxHome(stateDir string) string {
	runs := filepath.Dir(filepath.Dir(filepath.Clean(stateDir)))
	if stateDir == "" || filepath.Base(runs) != "runs" {
		return ""
	}
	return filepath.Dir(runs)
}

// inAny reports whether path is one of dirs or below one.
func inAny(path string, dirs []string) bool {
	path = resolved(path)
	for _, d := range dirs {
		if d == "" {
			continue
		}
		d = resolved(d)
		if path == d || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

func confineError(err error) error {
	if err == nil {
		return nil
	}
	return &startError{codeSandbox, "runbox: " + err.Error()}
}

// installDirs is where the command lives when that is outside the system
// directories, so a confined run may still read it: for PREFIX/bin/NAME
// (a virtualenv, a toolchain; PREFIX/shims/NAME for pyenv, rbenv) the prefix, else the command's directory,
// for the path as given and as its symlinks resolve. A directory that is
// a home directory (or above one) is too wide: only the file is given.
func installDirs(path string) []string {
	if !filepath.IsAbs(path) {
		return nil // relative to the workspace, which is readable
	}
	var out []string
	for _, p := range []string{path, resolved(path)} {
		dir := filepath.Dir(p)
		if b := filepath.Base(dir); b == "bin" || b == "sbin" || b == "shims" {
			dir = filepath.Dir(dir)
		}
		if system(dir) {
			continue
		}
		if tooWide(dir) {
			out = append(out, p)
			continue
		}
		out = append(out, dir)
	}
	return out
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func system(dir string) bool {
	for _, s := range confine.SystemRO {
		if dir == s || strings.HasPrefix(dir, s+"/") {
			return true
		}
	}
	return false
}

// tooWide reports whether opening dir would open a home directory: dir is
// /, /home, /root, /Users or a home directory itself.
func tooWide(dir string) bool {
	home, _ := os.UserHomeDir()
	switch filepath.Dir(dir) {
	case "/", "/home", "/Users":
		return true
	}
	return dir == "/" || dir == home || strings.HasPrefix(home, dir+"/")
}
