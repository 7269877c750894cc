package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/analyze"
	"github.com/runbox/runbox/plugins/analyze/corpus"
	"github.com/runbox/runbox/sdk"
)

// runAnalyze analyzes a log exactly as a live run's output would be
// (plugins/analyze) with the plugins the daemon opens.
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
	h, err := plugins.NewHost(ctx, pluginConfig(log))
	if err != nil {
		log.Warn("plugins unavailable; the log is analyzed without them", "err", err)
		h = nil
	} else {
		defer h.Close(context.WithoutCancel(ctx))
	}
	fallback := func(in sdk.ClassifyInput) *sdk.Failure { return host.Classify(ctx, nil, in) }
	if c.Corpus != "" {
		if h == nil {
			return fmt.Errorf("analyze --corpus: the plugins could not be opened: %w", err)
		}
		return evalCorpus(ctx, a, h, c, fallback)
	}
	code, sig := c.Ending()
	end := sdk.ClassifyInput{ExitCode: code, Signal: sig, OOMKilled: c.OOM, TimedOut: c.TimedOut}
	r, err := analyze.Analyze(ctx, h, in, end, fallback)
	if err != nil {
		return err
	}
	res := daemon.AnalysisView(r.Failure, r.Progress)
	if a.G.JSON {
		return a.PrintJSON(res)
	}
	cli.PrintAnalysis(res)
	return nil
}

// evalCorpus measures the plugins on a labelled corpus.
func evalCorpus(ctx context.Context, a *cli.App, h *plugins.Host, c *cli.AnalyzeCmd, fallback func(sdk.ClassifyInput) *sdk.Failure) error {
	cp, err := corpus.Load(c.Corpus)
	if err != nil {
		return err
	}
	rep, err := cp.Run(ctx, h, fallback)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(rep)
	}
	rep.Write(os.Stdout, c.Misses)
	return nil
}
