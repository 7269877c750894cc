// Package explain is the one explanation session behind every way runbox
// explains a command's output: a live run (host's runner), `runbox
// analyze` and `make eval` (plugins/analyze and its corpus). Each feeds
// the output's lines, flushes when it wants the progress so far, and
// finishes with how the command ended; the session keeps the latest
// progress and hands it, with the end, to the classifiers. Keeping that
// sequence in one type is what stops the paths drifting apart (issue #24:
// a live run once added a NaN-loss rule that analyze lacked).
//
// What stays with each caller is how lines arrive (the live path's
// batching, lag skipping and tails of raw bytes; analyze's lazy loading of
// the parsers) and what only it knows about the end (the live path's
// outside-termination and isolation advice, which come from the sandbox,
// not the output).
package explain

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/runbox/runbox/sdk"
)

// Parser turns lines into progress: a plugins.Parser, or the host's
// adapter of one. Feed is called from one goroutine; Flush and State may be
// called from another (a ticker) and the parser must allow that, as
// plugins.Parser does.
type Parser interface {
	Feed(ctx context.Context, stream, line string)
	Flush(ctx context.Context)
	State() *sdk.Progress
}

// Classifier names a failure from how the command ended and the tail of
// its output; it never returns nil (the caller's fallback is part of it).
type Classifier func(ctx context.Context, in sdk.ClassifyInput) *sdk.Failure

// Session explains one command's output.
type Session struct {
	p        Parser // nil: no progress
	classify Classifier

	mu   sync.Mutex
	prog *sdk.Progress
}

// New returns a session over p (which may be nil) and classify.
func New(p Parser, classify Classifier) *Session {
	return &Session{p: p, classify: classify}
}

// Feed gives the parser one line of stream ("stdout", "stderr"). It adds
// nothing to the parser's own Feed: a live run's child must never wait on
// progress, and the parser batches and prefilters.
func (s *Session) Feed(ctx context.Context, stream, line string) {
	if s.p != nil {
		s.p.Feed(ctx, stream, line)
	}
}

// Flush sends the pending lines to the plugins (bounded by ctx) and takes
// the parser's state as the latest progress; changed says whether it
// differs from the one before. st is nil while there is no progress.
func (s *Session) Flush(ctx context.Context) (st *sdk.Progress, changed bool) {
	if s.p == nil {
		return nil, false
	}
	s.p.Flush(ctx)
	st = s.p.State()
	if st == nil {
		return nil, false
	}
	s.mu.Lock()
	changed = s.prog == nil || !same(s.prog, st)
	s.prog = st
	s.mu.Unlock()
	return st, changed
}

// Progress is a copy of the latest progress, nil when there is none.
func (s *Session) Progress() *sdk.Progress {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prog == nil {
		return nil
	}
	p := *s.prog
	return &p
}

// Finish ends the session: the latest progress and, when end is not nil
// (the command failed), the failure the classifiers name for it, given
// that progress. The caller flushes first, with the bound it can afford.
func (s *Session) Finish(ctx context.Context, end *sdk.ClassifyInput) (*sdk.Progress, *sdk.Failure) {
	prog := s.Progress()
	if end == nil || s.classify == nil {
		return prog, nil
	}
	in := *end
	if prog != nil {
		p := *prog
		in.Progress = &p
	}
	return prog, s.classify(ctx, in)
}

// Failed says whether a command that ended as in failed, for callers that
// know only the end (analyze); a live run's store state says it there.
func Failed(in sdk.ClassifyInput) bool {
	return in.ExitCode != 0 || in.Signal != "" || in.OOMKilled || in.TimedOut ||
		in.Cancelled || in.Stalled || in.SandboxError != ""
}

func same(a, b *sdk.Progress) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}
