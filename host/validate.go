package host

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
)

// ErrBadRequest marks requests that can never succeed as given.
var ErrBadRequest = errors.New("bad request")

func badRequest(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrBadRequest, fmt.Sprintf(format, a...))
}

// maxPids is the kernel's PID_MAX_LIMIT: pids.max refuses more, and the
// refusal, read later, looked like a missing pids controller.
const maxPids = 4 << 20

// validate refuses a request that can never succeed as given, whatever
// backend takes it: it is the one place the request's own values are
// checked (a backend's admission checks what it can give). Every client
// (CLI, MCP, dashboard, API, retries) reaches it through Submit or Plan.
func validate(req api.RunRequest) error {
	if len(req.Command) == 0 {
		return badRequest("no command given")
	}
	if err := checkLimits(req); err != nil {
		return err
	}
	if err := checkInput(req); err != nil {
		return err
	}
	if err := checkWorkdir(req.Workdir); err != nil {
		return err
	}
	if err := checkAssets(req); err != nil {
		return err
	}
	for _, kv := range req.Env {
		if !strings.Contains(kv, "=") {
			return badRequest("env %q is not KEY=VALUE", kv)
		}
	}
	switch req.Network {
	case "", "none", "bridge", "host":
	default:
		return badRequest("unknown network %q (want none, bridge or host)", req.Network)
	}
	switch req.Isolate {
	case "", sandbox.IsolateNone, sandbox.IsolateNet, sandbox.IsolateFS, sandbox.IsolateFull:
	default:
		return badRequest("unknown isolation level %q (want none, net, fs or full)", req.Isolate)
	}
	return nil
}

func checkWorkdir(wd string) error {
	if wd == "" {
		return badRequest("no working directory given")
	}
	if !filepath.IsAbs(wd) {
		return badRequest("working directory %q is not absolute", wd)
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return badRequest("working directory %s does not exist", wd)
	}
	return nil
}

// checkAssets refuses an asset that can never be placed: a source that
// is not an absolute path to something that exists, a destination outside
// the workspace. It was accepted, and the run failed as it started (a
// process run) or took the asset and ignored it (a Slurm job).
func checkAssets(req api.RunRequest) error {
	for _, a := range req.Assets {
		if !filepath.IsAbs(a.Src) {
			return badRequest("asset %q: the source must be an absolute path", a.Src)
		}
		if _, err := os.Stat(a.Src); err != nil {
			return badRequest("asset %s: %v", a.Src, errors.Unwrap(err))
		}
		if _, err := sandbox.Asset(a).Target(req.Workdir); err != nil {
			return badRequest("%v", err)
		}
	}
	return nil
}

// checkLimits refuses limits that cannot mean what they say: a negative
// duration or count is never "no limit" (clients other than the CLI, such
// as agents, reach the daemon directly).
func checkLimits(req api.RunRequest) error {
	for _, d := range []struct {
		name string
		v    api.Duration
	}{{"timeout", req.Timeout}, {"grace", req.Grace}, {"stall_timeout", req.StallTimeout}} {
		if d.v < 0 {
			return badRequest("%s %s is negative", d.name, d.v)
		}
	}
	switch {
	case req.Limits.MemoryBytes < 0:
		return badRequest("memory limit %d is negative", req.Limits.MemoryBytes)
	case req.Limits.CPUs < 0:
		return badRequest("cpus %g is negative", req.Limits.CPUs)
	case req.Limits.Pids < 0:
		return badRequest("pids %d is negative", req.Limits.Pids)
	}
	if req.Limits.Pids > maxPids {
		return badRequest("pids %d is more than the kernel allows (%d); leave it out for no limit", req.Limits.Pids, maxPids)
	}
	return nil
}

// checkInput refuses a request whose argv, environment or paths hold a
// NUL byte. No exec can pass one (C strings end there): such a run was
// accepted and then failed as COMMAND_NOT_FOUND, or ran with a shortened
// argument.
func checkInput(req api.RunRequest) error {
	has := func(s string) bool { return strings.IndexByte(s, 0) >= 0 }
	for i, a := range req.Command {
		if has(a) {
			return badRequest("command argument %d (%q) holds a NUL byte, which no process argument can", i, a)
		}
	}
	for what, list := range map[string][]string{"env": req.Env, "client_env": req.ClientEnv, "env_allow": req.EnvAllow} {
		for _, kv := range list {
			if has(kv) {
				name, _, _ := strings.Cut(kv, "=")
				return badRequest("%s %q holds a NUL byte, which no environment variable can", what, strings.ReplaceAll(name, "\x00", `\x00`))
			}
		}
	}
	for i, s := range req.Setup {
		if has(s) {
			return badRequest("setup command %d (%q) holds a NUL byte", i, s)
		}
	}
	for what, s := range map[string]string{"workdir": req.Workdir, "image": req.Image, "user": req.User, "stdin_file": req.StdinFile, "script_path": req.ScriptPath} {
		if has(s) {
			return badRequest("%s %q holds a NUL byte", what, s)
		}
	}
	for _, p := range req.RW {
		if has(p) {
			return badRequest("rw path %q holds a NUL byte", p)
		}
	}
	for _, a := range req.Assets {
		if has(a.Src) || has(a.Dst) {
			return badRequest("asset %q holds a NUL byte", a.Src)
		}
	}
	return nil
}
