package plugins

import (
	"cmp"
	"slices"

	"github.com/runbox/runbox/sdk"
)

// Progress from several sources: the progress plugins (each fed on its
// own, answering when it is done) and the rules files (read in Feed).
// Each source's updates are folded into a progress of its own, in the
// order it answered them; the state a Parser reports is made of these by
// one rule, compose, so that what it says of an output does not depend on
// which plugin answered first (docs/PLUGINS.md §8: a live run and analyze
// of its log cannot explain the same output differently):
//
//   - a source that has read further into the output goes over one that
//     has not caught up yet (a slower plugin's older step never
//     overwrites a newer one);
//   - between sources as far in, which is every source once the output
//     is flushed, a fixed rank decides: user plugins (and the installed
//     bundles' rules files) over the built-ins, then the higher manifest
//     priority, then by name, then by source;
//   - a field only one source reports is that source's.

// progSource is one source's progress.
type progSource struct {
	rank  sourceRank
	state sdk.Progress
	has   bool // state holds an update
	pos   uint64
}

// sourceRank orders sources between which the output cannot: the one
// that ranks higher wins each field both report.
type sourceRank struct {
	builtin  bool
	priority int
	name     string // manifest name, "rules:NAME"
	source   string // the module's source: unique
}

// rankOf is a loaded module's rank.
func rankOf(m *module) sourceRank {
	return sourceRank{builtin: m.builtin, priority: m.manifest.Priority, name: m.manifest.Name, source: m.source}
}

// compareRank is negative when a ranks below b.
func compareRank(a, b sourceRank) int {
	if a.builtin != b.builtin {
		if a.builtin {
			return -1
		}
		return 1
	}
	if c := cmp.Compare(a.priority, b.priority); c != 0 {
		return c
	}
	// Names and sources: the first in order ranks highest.
	if c := cmp.Compare(b.name, a.name); c != 0 {
		return c
	}
	return cmp.Compare(b.source, a.source)
}

// composeProgress is the rule: the sources' progress folded from the
// lowest (least far into the output, then lowest rank) to the highest,
// each field the last source's that reports it. Sources without an
// update are skipped; the result is empty when none has one.
func composeProgress(srcs []*progSource) sdk.Progress { return compose(srcs, true) }

// compose is composeProgress, without any metrics unless metrics is set
// (a run's update carries its own: copying every source's was waste).
func compose(srcs []*progSource, metrics bool) sdk.Progress {
	var ordered []*progSource
	for _, s := range srcs {
		if s.has {
			ordered = append(ordered, s)
		}
	}
	slices.SortStableFunc(ordered, func(a, b *progSource) int {
		if c := cmp.Compare(a.pos, b.pos); c != 0 {
			return c
		}
		return compareRank(a.rank, b.rank)
	})
	var out sdk.Progress
	for _, s := range ordered {
		st := s.state
		if !metrics {
			st.Metrics = nil
		}
		out.Merge(st)
	}
	return out
}

// caught is how far into the output t's progress has read: every line
// fed up to this position that it was to read has been answered. p.mu is
// held.
func (p *Parser) caught(t *parseTarget) uint64 {
	switch {
	case t.inflight != 0:
		return t.inflight - 1
	case len(t.seqs) > 0:
		return t.seqs[0] - 1
	}
	return p.seq
}

// composed returns the state: composeProgress of every source, as far as
// each has read now, its metrics only when metrics is set. p.mu is held.
func (p *Parser) composed(metrics bool) sdk.Progress {
	srcs := make([]*progSource, 0, len(p.targets)+len(p.ruleSrc))
	for _, t := range p.targets {
		if t.dead && !t.src.has {
			continue
		}
		t.src.pos = p.caught(t)
		srcs = append(srcs, &t.src)
	}
	for _, r := range p.ruleSrc {
		r.pos = p.seq // read as each line is fed: never behind
		srcs = append(srcs, r)
	}
	return compose(srcs, metrics)
}
