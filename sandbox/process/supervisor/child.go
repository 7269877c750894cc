package supervisor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// defaultPath is searched when the child's environment has no PATH, as a
// shell does (confstr _CS_PATH).
const defaultPath = "/usr/local/bin:/usr/bin:/bin"

// Exit codes a shell would give, and one for runbox's own failures.
const (
	codeCannotExec = 126 // found but not executable
	codeNotFound   = 127
	// codeSandbox ends a run runbox could not start (bad workdir, asset or
	// stdin file); like docker run and env(1), 125 is the wrapper's own.
	codeSandbox = 125
)

// childEnv is the host environment (or only EnvAllow's part of it with
// CleanEnv) overridden by spec.Env.
func childEnv(spec *sandbox.Spec, host []string) []string {
	allow := map[string]bool{}
	for _, k := range spec.EnvAllow {
		allow[k] = true
	}
	var env []string
	idx := map[string]int{}
	add := func(kv string) {
		k, _, _ := strings.Cut(kv, "=")
		if i, ok := idx[k]; ok {
			env[i] = kv
			return
		}
		idx[k] = len(env)
		env = append(env, kv)
	}
	for _, kv := range host {
		k, _, _ := strings.Cut(kv, "=")
		if !spec.CleanEnv || allow[k] {
			add(kv)
		}
	}
	for _, kv := range spec.Env {
		add(kv)
	}
	return env
}

func envValue(env []string, key string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v, true
		}
	}
	return "", false
}

// startError is a command that could not be started the way a shell
// reports it: a code (126/127) and a message for the run's stderr.
type startError struct {
	code int
	msg  string
}

func (e *startError) Error() string { return e.msg }

// lookPath resolves name like a shell would for the child: names with a
// slash are taken as they are (relative to the workdir), others are searched
// in the child's PATH.
func lookPath(name string, env []string, dir string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	path, ok := envValue(env, "PATH")
	if !ok {
		path = defaultPath
	}
	var denied string
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, name)
		abs := p
		if !filepath.IsAbs(abs) {
			abs = filepath.Join(dir, p)
		}
		st, err := os.Stat(abs)
		if err != nil || st.IsDir() {
			continue
		}
		if st.Mode()&0o111 != 0 {
			return abs, nil
		}
		if denied == "" {
			denied = abs
		}
	}
	if denied != "" {
		return "", &startError{codeCannotExec, fmt.Sprintf("runbox: %s: permission denied", name)}
	}
	return "", &startError{codeNotFound, fmt.Sprintf("runbox: %s: command not found", name)}
}

// execError turns an exec failure into a shell-like startError.
func execError(name string, err error) *startError {
	var se *startError
	if errors.As(err, &se) {
		return se
	}
	var errno syscall.Errno
	code := codeNotFound
	if errors.As(err, &errno) && (errno == syscall.EACCES || errno == syscall.ENOEXEC || errno == syscall.EPERM) {
		code = codeCannotExec
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	msg := fmt.Sprintf("runbox: %s: %v", name, err)
	if errors.Is(err, fs.ErrNotExist) && !strings.Contains(name, "/") {
		msg = fmt.Sprintf("runbox: %s: command not found", name)
	}
	return &startError{code, msg}
}

// mainCommand builds the run's command (argv, or sh -c with Shell).
func mainCommand(spec *sandbox.Spec, env []string) (*exec.Cmd, error) {
	argv := spec.Command
	if spec.Shell {
		argv = []string{"sh", "-c", strings.Join(spec.Command, " ")}
	}
	if len(argv) == 0 || argv[0] == "" {
		return nil, &startError{codeNotFound, "runbox: empty command"}
	}
	path, err := lookPath(argv[0], env, spec.Workdir)
	if err != nil {
		return nil, err
	}
	return &exec.Cmd{Path: path, Args: argv, Env: env, Dir: spec.Workdir}, nil
}

// shellCommand builds a setup command.
func shellCommand(script string, env []string, dir string) *exec.Cmd {
	return &exec.Cmd{Path: "/bin/sh", Args: []string{"sh", "-c", script}, Env: env, Dir: dir}
}

// openStdin returns the child's stdin: the spec's bytes in an unlinked
// private file (no pump goroutine, and a child that never reads cannot block
// anything), the named file, or nil for /dev/null.
func openStdin(spec *sandbox.Spec) (*os.File, error) {
	switch {
	case spec.StdinFile != "":
		f, err := os.Open(spec.StdinFile)
		if err != nil {
			return nil, fmt.Errorf("open stdin file: %w", err)
		}
		return f, nil
	case len(spec.Stdin) > 0:
		p := filepath.Join(spec.StateDir, protocol.StdinFile)
		f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR|os.O_TRUNC, protocol.SecretMode)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		os.Remove(p)
		if _, err := f.Write(spec.Stdin); err != nil {
			f.Close()
			return nil, fmt.Errorf("stdin: %w", err)
		}
		if _, err := f.Seek(0, 0); err != nil {
			f.Close()
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return f, nil
	}
	return nil, nil
}
