package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
)

// runAnalyze analyzes a log exactly as a live run's output would be: every
// line through the progress plugins, the tail through the classifiers.
func runAnalyze(ctx context.Context, a *cli.App, c *cli.AnalyzeCmd) error {
	// A short-lived command whose heap is mostly the two modules being
	// decoded: collecting garbage while they load only costs time. The
	// soft limit brings the collector back if a huge log ever needs it.
	debug.SetGCPercent(-1)
	debug.SetMemoryLimit(256 << 20)
	var in io.Reader = os.Stdin
	if c.File != "-" {
		f, err := os.Open(c.File)
		if err != nil {
			return fmt.Errorf("analyze: %w", err)
		}
		defer f.Close()
		in = f
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// The plugins as the daemon opens them, held here too to ask which
	// lines could have progress in them.
	ph, herr := plugins.NewHost(ctx, pluginConfig(log))
	if herr == nil {
		defer ph.Close(context.WithoutCancel(ctx)) // the judge closes it only once it used it
	}
	judge := host.NewPluginJudge(func(context.Context) (*plugins.Host, error) { return ph, herr }, 0, log)
	defer judge.Close()
	// Load the kinds needed side by side, not one after the other: the
	// classifiers only when the command did not succeed; the progress
	// parsers only once a line may need them, when that can be known before
	// loading them (a failed command's short log often has no progress at
	// all); never the planners.
	code, sig := c.Ending()
	cin := sdk.ClassifyInput{ExitCode: code, Signal: sig, OOMKilled: c.OOM, TimedOut: c.TimedOut}
	if needsClassify(cin) {
		judge.Warm(sdk.KindClassifier)
	}
	var mayProgress func(string) bool
	if herr == nil {
		mayProgress = ph.ProgressFilter()
	}
	if mayProgress == nil {
		judge.Warm(sdk.KindProgress)
	}
	res, err := analyze(ctx, judge, in, cin, mayProgress)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(res)
	}
	cli.PrintAnalysis(res)
	return nil
}

// analyze feeds a log through a judge: lines to the progress parser and
// the last 64 KiB to the classifiers, as a live run's stderr tail would be.
// With mayProgress, the parser is created at the first line it passes
// (the lines before it could not have reached a progress plugin), and not
// at all when none does; without, at once.
func analyze(ctx context.Context, j host.Judge, r io.Reader, in sdk.ClassifyInput, mayProgress func(string) bool) (api.Analysis, error) {
	var res api.Analysis
	var prog *sdk.Progress
	var p host.Parser
	newParser := func() {
		p = j.NewParser()
		// A parser whose plugin is still loading keeps only the newest
		// lines; analyze waits for it, so its answer does not depend on
		// how fast the plugin loaded.
		p.Ready(ctx)
	}
	if mayProgress == nil {
		newParser()
	}
	feed := func(line string) {
		if p == nil {
			if !mayProgress(line) {
				return
			}
			newParser()
		}
		p.Feed(ctx, "stdout", line)
	}
	tail := make([]byte, 0, 64<<10)
	sp := runlog.NewLineSplitter(16 << 10)
	br := bufio.NewReaderSize(r, 256<<10)
	buf := make([]byte, 256<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			sp.Write(chunk, feed)
			if len(chunk) >= cap(tail) {
				tail = append(tail[:0], chunk[len(chunk)-cap(tail):]...)
			} else {
				if over := len(tail) + len(chunk) - cap(tail); over > 0 {
					tail = append(tail[:0], tail[over:]...)
				}
				tail = append(tail, chunk...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return res, fmt.Errorf("analyze: read: %w", err)
		}
	}
	sp.Close(feed)
	if p != nil {
		p.Flush(ctx)
		prog = p.State()
		res.Progress = daemon.AnalysisView(nil, prog).Progress
	}
	if !needsClassify(in) {
		return res, nil
	}
	var d runlog.TextDecoder
	in.StderrTail = string(d.Decode(tail)) + string(d.Flush())
	in.Progress = prog
	res.Failure = daemon.AnalysisView(host.Classify(ctx, j, in), nil).Failure
	return res, nil
}

// needsClassify reports whether a command that ended as in did fail, and so
// whether its log goes to the classifiers.
func needsClassify(in sdk.ClassifyInput) bool {
	return in.ExitCode != 0 || in.Signal != "" || in.OOMKilled || in.TimedOut
}
