// Package cli is runbox's command line, shared by the two binaries:
// runbox, the thin client every command starts in, and runboxd, which
// holds what needs the store, the sandboxes or the plugin runtime in
// process (the daemon, analyze, plugins). The grammar, help and flag
// checks are the same in both; the commands that runbox cannot run itself
// go through an Engine. This package is wiring only; the logic lives in
// host/, sandbox/, plugins/ and store/.
package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"reflect"
	"slices"
	"syscall"
	"time"

	"github.com/alecthomas/kong"
)

// Version is set by the Makefile with
// -ldflags "-X github.com/runbox/runbox/cmd/internal/cli.Version=...".
var Version = "dev"

// CLI is runbox's command line.
type CLI struct {
	Globals

	Run      RunCmd      `cmd:"" help:"Run a command and stream its output (attached), or start it in the background (--detach)."`
	Plan     PlanCmd     `cmd:"" help:"Say how a command would run and what could go wrong, without running it."`
	Exec     ExecCmd     `cmd:"" help:"Run a plan made by 'runbox plan'."`
	Status   StatusCmd   `cmd:"" help:"Show a run's state, progress and failure analysis."`
	Wait     WaitCmd     `cmd:"" help:"Wait for a run to end; exits with its exit code."`
	Stop     StopCmd     `cmd:"" help:"Stop a run and its whole process tree (SIGTERM, grace, SIGKILL)."`
	Logs     LogsCmd     `cmd:"" help:"Print a run's output."`
	Ls       LsCmd       `cmd:"" help:"List runs, newest first."`
	Diff     DiffCmd     `cmd:"" help:"Show what differs between two runs: params, env, code, packages, image, host, limits, outcome."`
	Compare  CompareCmd  `cmd:"" help:"Compare runs side by side: params that differ, each metric's last and best, duration, outcome."`
	Retry    RetryCmd    `cmd:"" help:"Run a finished run's command again, linked to it."`
	Sweep    SweepCmd    `cmd:"" help:"Run a grid of parameter sets, one run each: sweep --param NAME=V1,V2 [--parallel N] -- CMD {NAME} (all its flags: runbox sweep submit --help); sweep status|wait|stop|ls."`
	Backends BackendsCmd `cmd:"" help:"Show the sandbox backends and which one 'auto' picks."`
	Analyze  AnalyzeCmd  `cmd:"" help:"Explain a saved log: why it failed and how far it got."`
	Ui       UiCmd       `cmd:"" help:"Open the local web dashboard: runs, live logs, progress, metric charts, stop and retry."`
	Plot     PlotCmd     `cmd:"" help:"Draw runs' metrics (loss, accuracy, ...): in the terminal, or to an SVG or PNG file (-o)."`
	Plugins  PluginsCmd  `cmd:"" help:"List, test, create and install plugins."`
	Daemon   DaemonCmd   `cmd:"" help:"Run the daemon in the foreground (normally started on demand)."`
	Mcp      McpCmd      `cmd:"" help:"Serve the compute tools to AI agents over MCP (stdio, or --http)."`
	Doctor   DoctorCmd   `cmd:"" help:"Check the store (every record, every index) and with --repair rebuild what it can; the daemon must be stopped."`
	Version  VersionCmd  `cmd:"" help:"Print runbox's version."`
}

// Globals are flags every command takes.
type Globals struct {
	JSON bool   `help:"Print machine-readable JSON." name:"json"`
	Home string `help:"State directory (runs, logs, store)." env:"RUNBOX_HOME" placeholder:"DIR"`
	// ProgressLines matters only to attached runs.
	// Version is --version, what users try first; the version command
	// says the same.
	Version       kong.VersionFlag `help:"Print runbox's version and exit." name:"version"`
	ProgressLines bool             `help:"Also print the ##PROGRESS## lines of an attached run (hidden by default: a live bar shows them on a terminal, a plain line per epoch elsewhere; the log always keeps them)." name:"progress-lines"`
}

// exitError carries a process exit code out of a command.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// usageError is a command line kong accepted but runbox does not: exit 2.
type usageError struct{ error }

// ExitCode returns an error that makes Main exit with code and print nothing.
func ExitCode(code int) error { return exitError{code} }

// Engine runs the commands that need the store, the sandboxes or the
// plugin runtime (or, for mcp, the MCP SDK) in this process: daemon,
// analyze, plugins and mcp. runbox hands them to runboxd; runboxd runs
// them.
type Engine interface {
	// Run runs one such command; cmd is the parsed command (*DaemonCmd,
	// *AnalyzeCmd, *PluginsLsCmd, ...).
	Run(ctx context.Context, a *App, cmd any) error
}

// EngineCommands are the top-level commands that run in runboxd (their Run
// goes to the Engine). runbox may hand them over before parsing anything:
// runboxd parses the same command line.
var EngineCommands = []string{"analyze", "plugins", "daemon", "mcp", "doctor", "plot", "ui"}

// IsEngineCommand reports whether name is one of EngineCommands.
func IsEngineCommand(name string) bool {
	return slices.Contains(EngineCommands, name)
}

// Main parses args (without the program name), runs the command and
// returns the process exit code.
func Main(args []string, engine Engine) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	var err error
	if q, ok := quickRun(args); ok {
		err = q.Run.Run(ctx, newApp(&q.Globals, engine))
	} else {
		kctx, globals, perr := parse(args)
		if perr != nil {
			fmt.Fprintln(os.Stderr, "runbox:", perr)
			return 2
		}
		kctx.BindTo(ctx, (*context.Context)(nil))
		err = kctx.Run(newApp(globals, engine))
	}
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "runbox:", err)
		return 2 // as for the flags kong rejects
	default:
		fmt.Fprintln(os.Stderr, "runbox:", err)
		return 1
	}
}

// parse parses args with kong: with a model of the globals and the one
// command args name where that is plain (grammar.go), else with the whole
// CLI.
func parse(args []string) (*kong.Context, *Globals, error) {
	grammar, globals := grammarFor(args)
	p, err := newParser(grammar)
	if err != nil {
		return nil, nil, err
	}
	kctx, err := p.Parse(args)
	return kctx, globals, err
}

// newParser builds kong's parser of grammar (CLI, or what oneCommand
// makes); extra options come after runbox's own (tests redirect output).
func newParser(grammar any, extra ...kong.Option) (*kong.Kong, error) {
	return kong.New(grammar, append([]kong.Option{
		kong.Name("runbox"),
		kong.Description(description),
		kong.UsageOnError(),
		kong.ConfigureHelp(kong.HelpOptions{Compact: true, NoExpandSubcommands: true}),
		kong.Vars{"version": "runbox " + Version, "run_help": runHelp, "sweep_help": sweepHelp},
		kong.TypeMapper(reflect.TypeOf(time.Duration(0)), kong.MapperFunc(durationValue)),
	}, extra...)...)
}

// durationValue reads a duration flag as kong's own mapper does, and says
// what one looks like when it is not: `--timeout 5` was answered
// `expected duration but got "5": time: missing unit in duration "5"`.
func durationValue(ctx *kong.DecodeContext, target reflect.Value) error {
	t, err := ctx.Scan.PopValue("duration")
	if err != nil {
		return err
	}
	v, ok := t.Value.(string)
	if !ok {
		v = fmt.Sprint(t.Value)
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("%q is not a duration: give it a unit, as in 90s, 30m or 2h", v)
	}
	target.SetInt(int64(d))
	return nil
}

const description = "runbox runs scripts — training jobs, data processing, generated code — in a Docker container, a supervised process or on a Slurm cluster, and tells you whether it is progressing and, when it fails, why and what to do next."

// VersionCmd prints the version.
type VersionCmd struct{}

// Run prints the version.
func (VersionCmd) Run(a *App) error {
	if a.G.JSON {
		return a.PrintJSON(map[string]string{"version": Version})
	}
	fmt.Println("runbox", Version)
	return nil
}

// SuperviseArg is the hidden first argument that makes runbox (or
// runboxd) act as the supervisor of one process run (sandbox/process).
const SuperviseArg = "__supervise"
