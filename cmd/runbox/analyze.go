package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/api"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
)

// AnalyzeCmd is `runbox analyze` (contract).
type AnalyzeCmd struct {
	File     string `arg:"" optional:"" default:"-" help:"Saved log file, or - for stdin." placeholder:"FILE|-"`
	ExitCode *int   `help:"The exit status the command ended with (default: unknown, assumed failed)." name:"exit-code" placeholder:"N"`
	Signal   string `help:"The signal that ended it, e.g. SIGKILL or 9." placeholder:"NAME"`
	OOM      bool   `help:"The sandbox reported an out-of-memory kill." name:"oom"`
	TimedOut bool   `help:"runbox's timeout ended it." name:"timed-out"`
}

// Run analyzes a log exactly as a live run's output would be: every line
// through the progress plugins, the tail through the classifiers.
func (c *AnalyzeCmd) Run(ctx context.Context, a *app) error {
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
	res, err := analyze(ctx, judge, in, c.classifyInput())
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(res)
	}
	printAnalysis(res)
	return nil
}

func (c *AnalyzeCmd) classifyInput() sdk.ClassifyInput {
	in := sdk.ClassifyInput{ExitCode: 1, OOMKilled: c.OOM, TimedOut: c.TimedOut}
	if c.ExitCode != nil {
		in.ExitCode = *c.ExitCode
	}
	if c.Signal != "" {
		in.Signal = signalName(c.Signal)
		if c.ExitCode == nil {
			in.ExitCode = 128 + signalNumber(in.Signal)
		}
	}
	return in
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

func printAnalysis(res api.Analysis) {
	if p := res.Progress; p != nil {
		fmt.Printf("progress: %s\n", strings.TrimPrefix(progressLine(p), "▶ "))
	} else {
		fmt.Println("progress: none found")
	}
	f := res.Failure
	if f == nil {
		fmt.Println("failure:  none (exit status 0)")
		return
	}
	fmt.Printf("failure:  %s (confidence %.2f, retryable %v)\n", f.Code, f.Confidence, f.Retryable)
	fmt.Printf("why:      %s\n", f.Message)
	for i, s := range f.Suggestions {
		label := "          "
		if i == 0 {
			label = "next:     "
		}
		fmt.Printf("%s• %s\n", label, s)
	}
	for i, e := range f.Evidence {
		label := "          "
		if i == 0 {
			label = "evidence: "
		}
		fmt.Printf("%s%s\n", label, e)
	}
}
