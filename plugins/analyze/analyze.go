// Package analyze explains a finished command's log as runbox explains a
// live run (runbox analyze): every line through the progress plugins, the
// end of the output through the classifiers when the command failed.
package analyze

import (
	"bufio"
	"context"
	"fmt"
	"io"

	"github.com/runbox/runbox/internal/tail"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/explain"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
)

// Result is what the plugins made of a log: the latest progress, and why
// the command failed (nil when it did not).
type Result struct {
	Failure  *sdk.Failure
	Progress *sdk.Progress
}

// TailBytes is how much of the end of the log the classifiers see, as much
// as a live run's stderr tail.
const TailBytes = 64 << 10

// Analyze reads a command's log from r and returns what the plugins of h
// make of it: the latest progress and, when the command failed (end says
// how it ended), why, with end.StderrTail the last TailBytes of the log.
//
// It loads only what the log needs, side by side rather than one after
// the other: the classifiers only when the command failed; the progress
// parsers only once a line may need them, when that can be known before
// loading them (Host.ProgressFilter; a failed command's short log often
// has no progress at all); never the planners.
//
// h may be nil (the plugins could not be opened): there is then no
// progress. fallback, when not nil, names the failure no classifier
// answered (the engine's rule, host.Classify).
func Analyze(ctx context.Context, h *plugins.Host, r io.Reader, end sdk.ClassifyInput, fallback func(sdk.ClassifyInput) *sdk.Failure) (Result, error) {
	failed := explain.Failed(end)
	lp := &lazyParser{h: h}
	if h != nil {
		if failed {
			h.Warm(sdk.KindClassifier)
		}
		if lp.mayProgress = h.ProgressFilter(); lp.mayProgress == nil {
			h.Warm(sdk.KindProgress)
			lp.open(ctx)
		}
	}
	s := explain.New(lp, func(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure {
		var f *sdk.Failure
		if h != nil {
			f = h.Classify(ctx, in)
		}
		if f == nil && fallback != nil {
			f = fallback(in)
		}
		return f
	})
	last, err := read(r, func(line string) { s.Feed(ctx, "stdout", line) })
	if err != nil {
		return Result{}, err
	}
	s.Flush(ctx)
	if !failed {
		return Result{Progress: s.Progress()}, nil
	}
	var d runlog.TextDecoder
	end.StderrTail = string(d.Decode(last)) + string(d.Flush())
	prog, f := s.Finish(ctx, &end)
	return Result{Progress: prog, Failure: f}, nil
}

// lazyParser is the session's parser for analyze: it loads the progress
// plugins only once a line may need them, when that can be known before
// loading them (Host.ProgressFilter; a failed command's short log often
// has no progress at all).
type lazyParser struct {
	h           *plugins.Host
	mayProgress func(string) bool
	p           *plugins.Parser
	// The lines before the first that passes, up to backlog of them: a
	// column table's first header line, a name/value table's rows above
	// its first with a literal; the parser's prefilter sends them with
	// the line that passes (prefilter.Rows), or not at all.
	before []string
}

const backlog = 64

func (l *lazyParser) open(ctx context.Context) {
	l.p = l.h.NewParser()
	// A parser whose plugin is still loading keeps only the newest
	// lines; analyze waits for it, so its answer does not depend on how
	// fast the plugin loaded.
	l.p.Ready(ctx)
}

func (l *lazyParser) Feed(ctx context.Context, stream, line string) {
	if l.p == nil {
		if l.h == nil || !l.mayProgress(line) {
			if len(l.before) == 2*backlog { // keep the last backlog, copying once per backlog lines
				l.before = append(l.before[:0], l.before[backlog:]...)
			}
			l.before = append(l.before, line)
			return
		}
		l.open(ctx)
		for _, b := range l.before[max(0, len(l.before)-backlog):] {
			l.p.Feed(stream, b)
		}
		l.before = nil
	}
	l.p.Feed(stream, line)
}

func (l *lazyParser) Flush(ctx context.Context) {
	if l.p != nil {
		l.p.Flush(ctx)
	}
}

func (l *lazyParser) State() *sdk.Progress {
	if l.p == nil {
		return nil
	}
	return l.p.State()
}

// read splits r into lines for feed, as a live run's output is split, and
// returns its last TailBytes.
func read(r io.Reader, feed func(string)) ([]byte, error) {
	last := tail.New(TailBytes)
	sp := runlog.NewLineSplitter(16 << 10)
	br := bufio.NewReaderSize(r, 256<<10)
	buf := make([]byte, 256<<10)
	for {
		n, err := br.Read(buf)
		if n > 0 {
			sp.Write(buf[:n], feed)
			last.Write(buf[:n])
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("analyze: read: %w", err)
		}
	}
	sp.Close(feed)
	return last.Bytes(), nil
}
