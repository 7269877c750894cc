package plugins

import (
	"context"
	"encoding/json"
	"maps"
	"sync"

	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/plugins/rules"
	"github.com/runbox/runbox/sdk"
)

// Parser turns one run's output into progress. It holds the run's state and
// passes it to the plugins as ParseInput.Last, so plugins stay stateless.
//
// Each progress plugin is fed on its own: Feed only queues a line for the
// plugins whose prefilter it passes, and each plugin's batches go to it
// from a goroutine of its own, one call at a time, the answers merged into
// the state as they come. So a plugin that is slow, hangs (until its call
// deadline and then its circuit breaker stop it) or is still loading holds
// up no other plugin's progress, and Feed never waits for a plugin call.
// A plugin that falls behind keeps its newest queued lines (progress is
// about the latest state) and the oldest are dropped, logged once.
//
// A Parser is safe for concurrent use (stdout and stderr readers may Feed
// at once).
type Parser struct {
	h       *Host
	mu      sync.Mutex
	targets []*parseTarget
	// seq counts the lines fed: a source's position (caught) is told in it.
	seq     uint64
	updated bool // a source has reported progress (composed)
	// onUpdate sees the state after each update (see OnUpdate).
	onUpdate func(sdk.Progress)
	// rules are the installed bundles' rules files: their progress
	// formats read each line here, in the host (package rules).
	rules []*rules.Reader
	// ruleSrc is each rules file's progress, as a source (rules[i]'s).
	ruleSrc []*progSource
}

// OnUpdate has fn called with the state after each update a plugin
// reports, in order, its Metrics being only the ones that update carried
// (a line with none must not re-record the last values at its step), so
// that a metric history sees every step rather than the latest state at
// each flush. fn runs with the parser locked: it must
// be quick and must not call the parser.
func (p *Parser) OnUpdate(fn func(sdk.Progress)) {
	p.mu.Lock()
	p.onUpdate = fn
	p.mu.Unlock()
}

// parseTarget is one module that is, or may turn out to be once loaded, a
// progress plugin, with the lines waiting for it.
type parseTarget struct {
	m        *module
	resolved bool              // m finished loading: filter is its own, or dead
	dead     bool              // not a progress plugin, or not loaded: not fed
	filter   *prefilter.Filter // before resolved: the known manifest's, or nil (keep all)
	rows     prefilter.Rows    // the stream's column table, for filter
	lines    []string          // the backlog while loading, then the queue to send
	bytes    int
	head     uint64 // sequence number of lines[0]: lines taken or dropped so far
	flushTo  uint64 // send partial batches until head reaches this (Flush)
	sending  bool   // a sender goroutine runs for this target
	idle     chan struct{}
	buf      []byte // the last batch's JSON, reused
	warned   bool   // dropping lines was logged
	// state is the plugin's last ParseOutput.State, sent back with its
	// next batch (sdk.ParseInput.State): what the plugin remembers of
	// this run beyond the progress (the built-in one's counters).
	state string
	// seqs are the feed positions of lines (p.seq when each was fed),
	// and inflight that of the first line of the batch being answered
	// (0: none): how far the plugin's progress has caught up (caught).
	seqs     []uint64
	inflight uint64
	src      progSource // what this plugin made of the output so far
}

// NewParser returns a Parser for one run and starts loading the progress
// plugins in the background.
func (h *Host) NewParser() *Parser {
	h.refresh()
	h.Warm(sdk.KindProgress)
	p := &Parser{h: h}
	for _, rf := range h.rules() {
		p.rules = append(p.rules, rf.NewReader()) // a run's counters
		p.ruleSrc = append(p.ruleSrc, &progSource{rank: sourceRank{name: "rules:" + rf.Name}})
	}
	for _, m := range h.mods() {
		if m.kind != "" && m.kind != sdk.KindProgress {
			continue
		}
		t := &parseTarget{m: m}
		if m.known != nil && m.kind == sdk.KindProgress {
			t.filter, _ = prefilter.Cached(m.known.Prefilter, m.known.PrefilterConfirm)
		}
		p.targets = append(p.targets, t)
	}
	return p
}

// Feed offers one output line (without its line ending) from stream
// ("stdout" or "stderr"; both streams share the batches, in Feed order).
// Only lines that pass a plugin's prefilter (one of its literals,
// confirmed by the text around it where the manifest asks for that) are
// queued for it, and sent in batches of up to BatchLines lines or
// BatchBytes bytes; a full batch goes at once, the rest on Flush. Until a
// plugin is loaded, its newest 4×BatchLines lines are kept for it.
func (p *Parser) Feed(stream, line string) {
	_ = stream
	if limit := p.h.cfg.MaxLineBytes; len(line) > limit {
		line = line[:limit]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.seq++
	for i, rf := range p.rules {
		if u, ok := rf.Line(line); ok {
			p.merge(p.ruleSrc[i], u)
		}
	}
	for _, t := range p.targets {
		if t.dead {
			continue
		}
		if !t.resolved && !p.tryResolve(t) {
			if t.filter == nil {
				p.push(t, line, 4*p.h.cfg.BatchLines)
			} else {
				p.offer(t, line, 4*p.h.cfg.BatchLines)
			}
			continue
		}
		if t.dead || !p.offer(t, line, queueBatches*p.h.cfg.BatchLines) {
			continue
		}
		if p.full(t) {
			p.kick(t)
		}
	}
}

// queueBatches is how many full batches may wait for a plugin whose call
// is still running before its oldest lines are dropped.
const queueBatches = 16

// Flush sends every line waiting for a plugin, and waits (bounded by ctx)
// until they are answered, each plugin on its own: a plugin still loading
// with lines waiting is waited for, and sent them once loaded. What came
// before ctx ended is in State. Call it every ~200 ms while a run is live
// and once at its end.
func (p *Parser) Flush(ctx context.Context) {
	var wg sync.WaitGroup
	p.mu.Lock()
	for _, t := range p.targets {
		if t.dead || (!t.resolved && len(t.lines) == 0) {
			continue
		}
		if !t.resolved && !p.tryResolve(t) {
			wg.Go(func() { p.flushLoading(ctx, t) })
			continue
		}
		if idle := p.drain(t); idle != nil {
			wg.Go(func() { waitOr(ctx, idle) })
		}
	}
	p.mu.Unlock()
	wg.Wait()
}

// flushLoading waits (bounded by ctx) for t's module to load, then sends
// it its lines and waits for the answers.
func (p *Parser) flushLoading(ctx context.Context, t *parseTarget) {
	if !waitOr(ctx, t.m.ready) {
		return
	}
	p.mu.Lock()
	p.tryResolve(t)
	idle := p.drain(t)
	p.mu.Unlock()
	if idle != nil {
		waitOr(ctx, idle)
	}
}

// drain has every line now waiting for resolved target t sent, partial
// batches too, and returns a channel closed once they are answered (nil
// when nothing is waiting). p.mu is held.
func (p *Parser) drain(t *parseTarget) <-chan struct{} {
	if t.dead {
		return nil
	}
	t.flushTo = t.head + uint64(len(t.lines))
	if len(t.lines) > 0 {
		p.kick(t)
	}
	if !t.sending {
		return nil
	}
	return t.idle
}

func waitOr(ctx context.Context, ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	case <-ctx.Done():
		return false
	}
}

// Ready waits (bounded by ctx) until the progress plugins are loaded (or
// failed to), so that no line fed afterwards waits in a backlog, where the
// oldest are dropped: what a Parser makes of an output then does not
// depend on how fast the plugins loaded.
func (p *Parser) Ready(ctx context.Context) {
	for _, t := range p.targets {
		if !t.m.wait(ctx) && ctx.Err() != nil {
			return
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range p.targets {
		if !t.resolved {
			p.tryResolve(t)
		}
	}
}

// State returns a copy of the progress so far, or nil when no plugin has
// reported any.
func (p *Parser) State() *sdk.Progress {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.updated {
		return nil
	}
	s := p.composed(true) // a fresh value: its Metrics are the caller's
	return &s
}

// tryResolve reports whether t's module has finished loading and, the
// first time, takes its prefilter (or marks it dead) and filters its
// backlog through it. p.mu is held.
func (p *Parser) tryResolve(t *parseTarget) bool {
	if t.resolved {
		return true
	}
	select {
	case <-t.m.ready:
	default:
		return false
	}
	t.resolved = true
	if t.m.loadErr != nil || !t.m.manifest.Has(sdk.KindProgress) || t.m.clash() != nil {
		t.dead, t.lines, t.seqs, t.bytes = true, nil, nil, 0
		return true
	}
	man := t.m.manifest
	t.src.rank = rankOf(t.m)
	f, errs := prefilter.Cached(man.Prefilter, man.PrefilterConfirm)
	for _, err := range errs {
		p.h.log.Warn("plugin prefilter entry ignored", "plugin", man.Name, "err", err)
	}
	t.filter = f
	backlog, seqs := t.lines, t.seqs
	t.lines, t.seqs, t.bytes, t.rows = nil, nil, 0, prefilter.Rows{}
	for i, l := range backlog {
		p.offerAt(t, l, seqs[i], queueBatches*p.h.cfg.BatchLines)
	}
	if p.full(t) {
		p.kick(t)
	}
	return true
}

// offer queues line for t when t's prefilter passes it, and before it
// the lines prefilter.Rows hands back (a table header's first line, a
// name/value table's rows above the first that passed); it
// reports whether line passed. p.mu is held.
func (p *Parser) offer(t *parseTarget, line string, limit int) bool {
	return p.offerAt(t, line, p.seq, limit)
}

// offerAt is offer for a line fed at position seq.
func (p *Parser) offerAt(t *parseTarget, line string, seq uint64, limit int) bool {
	ok, before := t.rows.Match(t.filter, line)
	for _, b := range before {
		p.pushAt(t, b, seq, limit) // fed before line: seq is an upper bound
	}
	if ok {
		p.pushAt(t, line, seq, limit)
	}
	return ok
}

// push queues line, just fed, for t, dropping the oldest beyond limit
// lines. p.mu is held.
func (p *Parser) push(t *parseTarget, line string, limit int) {
	p.pushAt(t, line, p.seq, limit)
}

// pushAt is push for a line fed at position seq.
func (p *Parser) pushAt(t *parseTarget, line string, seq uint64, limit int) {
	t.lines = append(t.lines, line)
	t.seqs = append(t.seqs, seq)
	t.bytes += len(line)
	if over := len(t.lines) - limit; over > 0 {
		for _, l := range t.lines[:over] {
			t.bytes -= len(l)
		}
		t.lines = append(t.lines[:0], t.lines[over:]...)
		t.seqs = append(t.seqs[:0], t.seqs[over:]...)
		t.head += uint64(over)
		if !t.warned {
			t.warned = true
			p.h.log.Warn("progress plugin falls behind the output: its oldest lines are dropped",
				"plugin", t.m.source, "queued_lines", limit)
		}
	}
}

// full reports whether t has a full batch waiting. p.mu is held.
func (p *Parser) full(t *parseTarget) bool {
	return len(t.lines) >= p.h.cfg.BatchLines || t.bytes >= p.h.cfg.BatchBytes
}

// kick starts t's sender unless it runs. p.mu is held.
func (p *Parser) kick(t *parseTarget) {
	if t.sending {
		return
	}
	t.sending = true
	t.idle = make(chan struct{})
	go p.send(t)
}

// send is t's sender: it sends t's batches one call at a time and merges
// the answers into the state, until no full batch (and nothing Flush asked
// for) is left. A failing plugin loses its batch; the run goes on.
func (p *Parser) send(t *parseTarget) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for {
		n := p.batchLen(t)
		if n == 0 {
			t.sending = false
			close(t.idle)
			return
		}
		in := sdk.ParseInput{Lines: t.lines[:n], State: t.state}
		if p.updated {
			last := p.composed(true)
			in.Last = &last // encoded right here, not kept
		}
		b, err := in.AppendJSONNoEscapeHTML(t.buf[:0])
		if err != nil {
			_, err = json.Marshal(in) // encoding/json words the error
		}
		for _, l := range t.lines[:n] {
			t.bytes -= len(l)
		}
		t.inflight = t.seqs[0]
		t.lines = append(t.lines[:0], t.lines[n:]...)
		t.seqs = append(t.seqs[:0], t.seqs[n:]...)
		t.head += uint64(n)
		if err != nil {
			t.inflight = 0
			p.h.log.Warn("progress batch not sent", "plugin", t.m.source, "err", err)
			continue
		}
		if cerr := t.m.clash(); cerr != nil {
			// Found to share its name with another plugin once both
			// loaded: it answers no more (and what it said goes).
			t.inflight = 0
			t.dead, t.lines, t.seqs, t.bytes = true, nil, nil, 0
			t.src = progSource{rank: t.src.rank}
			continue
		}
		t.buf = b // only this sender uses it: safe to read unlocked
		p.mu.Unlock()
		var out sdk.ParseOutput
		ok, err := p.h.invoke(p.h.ctx, t.m, exportParse, encodedInput(b), &out)
		p.mu.Lock()
		t.inflight = 0
		if err != nil || !ok {
			continue
		}
		t.state = out.State
		for _, u := range out.Updates {
			p.merge(&t.src, u)
		}
	}
}

// merge folds u into src's progress and hands the state to onUpdate.
// p.mu is held.
func (p *Parser) merge(src *progSource, u sdk.Progress) {
	src.state.Merge(u)
	src.has = true
	p.updated = true
	if p.onUpdate != nil {
		// The state, as this update leaves it, with the metrics this
		// update reported and no others: a line that says none
		// ("checkpoint at step 10") must not re-record the last values
		// at its step, which drew stair-steps in every chart (issue
		// #24).
		metrics := u.Metrics
		u.Metrics = nil
		s := p.composed(false)
		s.Merge(u)
		s.Metrics = maps.Clone(metrics)
		p.onUpdate(s)
	}
}

// batchLen is how many of t's lines go in its next batch: a full batch,
// or, while Flush asked for lines not yet sent, what is there; 0 for none.
// p.mu is held.
func (p *Parser) batchLen(t *parseTarget) int {
	if !p.full(t) && (t.head >= t.flushTo || len(t.lines) == 0) {
		return 0
	}
	n, size := 0, 0
	for n < len(t.lines) && n < p.h.cfg.BatchLines {
		size += len(t.lines[n])
		n++
		if size >= p.h.cfg.BatchBytes {
			break
		}
	}
	return n
}
