package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/api"
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
	judge := newJudge(log, 0)
	defer judge.Close()
	// Both kinds are needed: load them side by side, not one after the other.
	judge.Warm(sdk.KindProgress, sdk.KindClassifier)
	res, err := analyze(ctx, judge, in, c.ClassifyInput())
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
func analyze(ctx context.Context, j host.Judge, r io.Reader, in sdk.ClassifyInput) (api.Analysis, error) {
	var res api.Analysis
	p := j.NewParser()
	tail := make([]byte, 0, 64<<10)
	sp := runlog.NewLineSplitter(16 << 10)
	br := bufio.NewReaderSize(r, 256<<10)
	buf := make([]byte, 256<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			chunk := buf[:n]
			sp.Write(chunk, func(line string) { p.Feed(ctx, "stdout", line) })
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
	sp.Close(func(line string) { p.Feed(ctx, "stdout", line) })
	p.Flush(ctx)
	res.Progress = p.State()
	if in.ExitCode == 0 && in.Signal == "" && !in.OOMKilled && !in.TimedOut {
		return res, nil
	}
	var d runlog.TextDecoder
	in.StderrTail = string(d.Decode(tail)) + string(d.Flush())
	in.Progress = res.Progress
	f := host.Classify(ctx, j, in)
	res.Failure = f
	return res, nil
}
