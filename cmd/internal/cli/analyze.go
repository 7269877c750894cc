package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/runbox/runbox/api"
)

// AnalyzeCmd is `runbox analyze` (contract).
type AnalyzeCmd struct {
	File     string `arg:"" optional:"" default:"-" help:"Saved log file, or - for stdin." placeholder:"FILE|-"`
	ExitCode *int   `help:"The exit status the command ended with (default: unknown, assumed failed)." name:"exit-code" placeholder:"N"`
	Signal   string `help:"The signal that ended it, e.g. SIGKILL or 9." placeholder:"NAME"`
	OOM      bool   `help:"The sandbox reported an out-of-memory kill." name:"oom"`
	TimedOut bool   `help:"runbox's timeout ended it." name:"timed-out"`
	Corpus   string `help:"Instead of one log, measure the plugins on a labelled corpus (failures.jsonl, progress.jsonl; see plugins/builtin/testdata/corpus/README.md): accuracy per failure code, framework and split." type:"existingdir" placeholder:"DIR"`
	Misses   bool   `help:"With --corpus, list the cases it got wrong." default:"true" negatable:""`
}

// Run analyzes a log exactly as a live run's output would be (in runboxd).
func (c *AnalyzeCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// Ending is what the flags say about how the logged command ended: its
// exit status (1 when unknown: assumed failed) and the signal's name.
func (c *AnalyzeCmd) Ending() (exitCode int, signal string) {
	exitCode = 1
	if c.ExitCode != nil {
		exitCode = *c.ExitCode
	}
	if c.Signal != "" {
		signal = signalName(c.Signal)
		if c.ExitCode == nil {
			exitCode = 128 + signalNumber(signal)
		}
	}
	return exitCode, signal
}

// PrintAnalysis prints an analysis for people.
func PrintAnalysis(res api.Analysis) {
	out := shown()
	if p := res.Progress; p != nil {
		fmt.Fprintf(out, "progress: %s\n", strings.TrimPrefix(progressLine(p), "▶ "))
	} else {
		fmt.Fprintln(out, "progress: none found")
	}
	f := res.Failure
	if f == nil {
		fmt.Fprintln(out, "failure:  none (exit status 0)")
		return
	}
	fmt.Fprintf(out, "failure:  %s (confidence %.2f, retryable %v)\n", f.Code, f.Confidence, f.Retryable)
	fmt.Fprintf(out, "why:      %s\n", f.Message)
	for i, s := range f.Suggestions {
		label := "          "
		if i == 0 {
			label = "next:     "
		}
		fmt.Fprintf(out, "%s• %s\n", label, s)
	}
	for i, e := range f.Evidence {
		label := "          "
		if i == 0 {
			label = "evidence: "
		}
		fmt.Fprintf(out, "%s%s\n", label, e)
	}
}
