package host

import (
	"strings"

	"github.com/runbox/runbox/api"
)

// maxPids is the kernel's PID_MAX_LIMIT: pids.max refuses more, and the
// refusal, read later, looked like a missing pids controller.
const maxPids = 4 << 20

// checkInput refuses a pids limit the kernel cannot set, and a request whose argv, environment or paths hold a NUL
// byte. No exec can pass one (C strings end there): such a run was
// accepted and then failed as COMMAND_NOT_FOUND, or ran with a shortened
// argument. Every client (CLI, MCP, dashboard, API) reaches Submit.
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
	if req.Limits.Pids > maxPids {
		return badRequest("pids %d is more than the kernel allows (%d); leave it out for no limit", req.Limits.Pids, maxPids)
	}
	return nil
}
