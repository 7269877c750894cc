package mcp

import (
	"regexp"
	"strings"
)

// The daemon's and the plugins' texts (failure messages and suggestions,
// the planner's reasons and notes, refusals) are shared with the CLI, so
// they name its commands and flags. An agent has neither: mcpText rewrites
// them, with one table, into the MCP tools and arguments that do the same,
// or, where MCP has none (pulling an image), into what the agent can do
// instead. It is applied wherever this package puts daemon text into an
// answer; log lines quoted as evidence are left as they are.

type cliWord struct {
	re   *regexp.Regexp
	repl string
}

// cliWords go from the most specific to the most general: an earlier
// entry's output is not matched again by a later one's pattern.
var cliWords = func() []cliWord {
	tab := []struct{ re, repl string }{
		// image refusals (docker sandbox)
		{`,? or pass --pull to let runbox pull it`, `, or choose an image that is present with backend_data.recommendations.image (MCP cannot pull images: whoever runs this machine can docker pull it), or use backend_data.recommendations.sandbox "process"`},
		{`\(pull or build it, or pass --image\)`, `(someone pulls or builds it, or set backend_data.recommendations.image to one present)`},
		// commands, with the run id the daemon put in
		{"`?runbox logs ([^\\s`)]+)`?", `local_logs({run_id: "$1"})`},
		{"`?runbox diff ([^\\s`)]+) ([^\\s`)]+)`?", `compare what_ran in local_status of runs "$1" and "$2"`},
		{"`?runbox (?:retry|rerun) ([^\\s`)]+)`?", `compute_plan with parent_run_id "$1", then local_execute with it`},
		{"`?runbox (?:status|show|wait) ([^\\s`)]+)`?", `local_status({run_id: "$1"})`},
		{"`?runbox stop ([^\\s`)]+)`?", `local_stop({run_id: "$1"})`},
		{"Run long jobs detached \\(`?runbox run --detach`?\\) so a closed terminal does not stop them\\.", `Runs started with local_execute already go on without the client; look for what else sent the signal.`},
		// flags with an MCP argument
		{`--timeout; timeout_minutes over MCP`, `timeout_minutes of local_execute, or backend_data.recommendations.timeout_minutes of compute_plan`},
		{`--timeout\b`, `backend_data.recommendations.timeout_minutes (or local_execute's timeout_minutes)`},
		{`--memory\b`, `backend_data.recommendations.memory`},
		{`--sandbox (process|docker|auto)\b`, `backend_data.recommendations.sandbox "$1"`},
		{`--sandbox slurm\b`, `the runbox CLI's --sandbox slurm (not available over MCP)`},
		{`--image\b`, `backend_data.recommendations.image`},
		{`pass --allow-risk \(agents: allow_risk\) to run it anyway, or run it`, `run it (over MCP a refused command cannot be forced; a person can, with the runbox CLI's --allow-risk)`},
		{`--allow-net\b`, `backend_data.recommendations.allow_net`},
	}
	out := make([]cliWord, len(tab))
	for i, t := range tab {
		out[i] = cliWord{regexp.MustCompile(t.re), t.repl}
	}
	return out
}()

// mcpText is s with the CLI's commands and flags put in MCP terms.
func mcpText(s string) string {
	if !strings.Contains(s, "--") && !strings.Contains(s, "runbox ") {
		return s
	}
	for _, w := range cliWords {
		s = w.re.ReplaceAllString(s, w.repl)
	}
	return s
}

// mcpTexts is ss, each rewritten by mcpText (a new slice; nil for nil).
func mcpTexts(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mcpText(s)
	}
	return out
}
