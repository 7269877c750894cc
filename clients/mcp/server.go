// Package mcp is runbox's Model Context Protocol server: the compute-local
// flow agents follow (list_compute_backends, compute_plan, local_execute,
// local_status, local_wait, local_stop, local_logs) as MCP tools. It is a
// client of the daemon like the CLI (it reaches it through package
// api/client only), so several agents, each with its own server process,
// share one store and one queue. Serve it over stdio (Server.Run with an
// SDK transport) or over streamable HTTP with a bearer token (ServeHTTP).
package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api/client"
)

// Options configure a server.
type Options struct {
	// Version is runbox's version, reported to clients.
	Version string
	// Workdir is where commands run when compute_plan names no workdir
	// (default: this process's working directory).
	Workdir string
	// Env is the environment process runs inherit (default: this
	// process's), as `runbox run` passes the shell's.
	Env []string
	// ProgressInterval is how often local_wait reports progress to a
	// client that asked for it (default 2s).
	ProgressInterval time.Duration
	// StopWait bounds how long local_stop waits for the run to end after
	// asking it to stop (default 30s).
	StopWait time.Duration
}

// Limits of the tools' arguments.
const (
	defaultWait    = 45 * time.Second
	maxWait        = 600 * time.Second
	maxTimeoutMins = 7 * 24 * 60
	maxTailLines   = 10000
	// maxLogText bounds local_logs' text: enough for a model to read a
	// traceback, small enough not to flood its context.
	maxLogText = 32 << 10
)

// server holds what the tool handlers share.
type server struct {
	c *client.Client
	o Options
}

// New returns an MCP server whose tools act through c.
func New(c *client.Client, o Options) *mcpsdk.Server {
	if o.Workdir == "" {
		o.Workdir, _ = os.Getwd()
	}
	if o.Env == nil {
		o.Env = os.Environ()
	}
	if o.ProgressInterval <= 0 {
		o.ProgressInterval = 2 * time.Second
	}
	if o.StopWait <= 0 {
		o.StopWait = 30 * time.Second
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	s := &server{c: c, o: o}
	srv := mcpsdk.NewServer(&mcpsdk.Implementation{Name: "runbox", Title: "runbox local compute", Version: o.Version},
		&mcpsdk.ServerOptions{Instructions: instructions})
	s.register(srv)
	srv.AddReceivingMiddleware(explainBadArguments)
	return srv
}

const instructions = `runbox runs scripts on this machine in a sandbox (a Docker container, or a supervised host process), parses their progress and explains failures. Flow: list_compute_backends (optional) -> compute_plan({backend: "local", command}) -> local_execute({plan_id}) -> local_wait / local_status until done -> on failure read failure.suggestions, fix, and retry with compute_plan + local_execute with parent_run_id set to the failed run. local_logs reads output; local_stop cancels. Print '##PROGRESS## {"step": 1, "total": 5, "phase": "loading"}' lines on stdout to report progress.`

// toolError is an error a tool reports to the model (isError): what went
// wrong and what to do about it.
func toolError(format string, a ...any) error { return fmt.Errorf(format, a...) }

// daemonError turns an error from the daemon or the transport into a tool
// error that says what to do. what names the object ("run", "plan"), id the
// id the model gave.
func daemonError(err error, what, id string) error {
	var ce *client.Error
	if errors.As(err, &ce) { // the daemon's words, in MCP terms, long ids cut
		c := *ce
		c.Msg = cutLongWords(mcpText(c.Msg))
		err = &c
	}
	q := quoteID(id)
	switch {
	case errors.As(err, &ce) && ce.Code == "not_found":
		switch what {
		case "plan":
			return toolError("no plan %s: call compute_plan to make one and pass the plan_id it returns (%s)", q, ce.Msg)
		case "parent run":
			return toolError("no run %s to retry: parent_run_id must be the run_id of an earlier run (%s)", q, ce.Msg)
		}
		return toolError("no run %s: pass a run_id returned by local_execute (%s)", q, ce.Msg)
	case errors.As(err, &ce) && ce.Code == "ambiguous":
		return toolError("%s id %s matches more than one %s: give more characters of it (%s)", what, q, what, ce.Msg)
	case errors.As(err, &ce) && ce.Code == "bad_request":
		return toolError("runbox refused this: %s", ce.Msg)
	case errors.As(err, &ce) && ce.Code == "disk_full":
		return toolError("the disk runbox keeps its runs on is full: free space, then call again (%s)", ce.Msg)
	case errors.As(err, &ce):
		return toolError("the runbox daemon failed: %s; call again, and if it persists see the daemon log (runbox daemon in a terminal)", ce.Msg)
	case errors.Is(err, client.ErrNoDaemon):
		return toolError("the runbox daemon is not reachable (%v): it is started again on the next call (or run `runbox daemon`); runs go on under their own supervisors and their state is kept, so call local_status again", err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return toolError("the call was cancelled before the daemon answered (%v)", err)
	}
	return toolError("lost the connection to the runbox daemon (%v): it may have stopped or restarted; runs go on under their supervisors and their state is kept, so call local_status again", err)
}

// cutLongWords cuts every word of msg over 64 bytes (an id a model
// pasted wrong, quoted back by the daemon) to its start.
func cutLongWords(msg string) string {
	if len(msg) <= 200 {
		return msg
	}
	ws := strings.Fields(msg)
	for i, w := range ws {
		kept, more := cutWord(w)
		ws[i] = kept + more
	}
	return strings.Join(ws, " ")
}

// cutWord is w's first 64 bytes (whole runes) and "… (N bytes)" when it is
// longer, else w and "".
func cutWord(w string) (kept, more string) {
	const most = 64
	if len(w) <= most {
		return w, ""
	}
	cut := most
	for cut > 0 && !utf8.RuneStart(w[cut]) {
		cut--
	}
	return w[:cut], fmt.Sprintf("… (%d bytes)", len(w))
}

// explainBadArguments rewrites the SDK's argument-validation errors (a
// missing required field, a value out of range) into a message that says
// which tool and what to fix.
func explainBadArguments(next mcpsdk.MethodHandler) mcpsdk.MethodHandler {
	return func(ctx context.Context, method string, req mcpsdk.Request) (mcpsdk.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/call" || err != nil {
			return res, err
		}
		r, ok := res.(*mcpsdk.CallToolResult)
		if !ok || !r.IsError || len(r.Content) != 1 {
			return res, err
		}
		tc, ok := r.Content[0].(*mcpsdk.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, `validating "arguments"`) {
			return res, err
		}
		name := ""
		if p, ok := req.GetParams().(*mcpsdk.CallToolParamsRaw); ok {
			name = p.Name
		}
		tc.Text = fmt.Sprintf("invalid arguments for %s: %s. Fix them as the tool's input schema says (required fields, types, limits) and call again.", name, validationDetail(tc.Text))
		return res, err
	}
}

var (
	// "validating /properties/a/properties/b: " of the innermost failure
	schemaPath = regexp.MustCompile(`validating /properties/(\S*): `)
	// the validator's numbers: "-5/1", "600.000000"
	ratio    = regexp.MustCompile(`(-?\d+)/1\b`)
	zeroFrac = regexp.MustCompile(`(\d)\.0+\b`)
)

// validationDetail turns a jsonschema validation error into "which
// argument: what is wrong".
func validationDetail(text string) string {
	text = strings.Join(strings.Fields(strings.TrimPrefix(text, `validating "arguments": `)), " ")
	text = strings.TrimPrefix(text, "validating root: ")
	if m := schemaPath.FindAllStringSubmatchIndex(text, -1); len(m) > 0 {
		last := m[len(m)-1]
		arg := strings.ReplaceAll(text[last[2]:last[3]], "/properties/", ".")
		text = arg + ": " + text[last[1]:]
	}
	text = ratio.ReplaceAllString(text, "$1")
	return zeroFrac.ReplaceAllString(text, "$1")
}

// textResult is a tool result whose content is a short summary; the SDK
// adds the structured output.
func textResult(format string, a ...any) *mcpsdk.CallToolResult {
	return &mcpsdk.CallToolResult{Content: []mcpsdk.Content{&mcpsdk.TextContent{Text: fmt.Sprintf(format, a...)}}}
}
