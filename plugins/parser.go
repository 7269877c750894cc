package plugins

import (
	"context"
	"maps"
	"sync"

	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/sdk"
)

// Parser turns one run's output into progress. It holds the run's state and
// passes it to the plugins as ParseInput.Last, so plugins stay stateless.
// A Parser is safe for concurrent use (stdout and stderr readers may Feed at
// once), but Feed may call a plugin (bounded by CallTimeout) when a batch
// fills, so the engine should feed from a goroutine of its own, never from
// the one that drains the child's pipes.
type Parser struct {
	h       *Host
	mu      sync.Mutex
	targets []*parseTarget // nil until the progress plugins are loaded
	backlog []string       // lines fed before that, oldest dropped
	state   sdk.Progress
	updated bool
	buf     []byte // the last batch's JSON, reused
}

type parseTarget struct {
	m      *module
	filter *prefilter.Filter
	lines  []string
	bytes  int
}

// NewParser returns a Parser for one run and starts loading the progress
// plugins in the background.
func (h *Host) NewParser() *Parser {
	h.Warm(sdk.KindProgress)
	return &Parser{h: h}
}

// Feed offers one output line (without its line ending) from stream
// ("stdout" or "stderr"; both streams share the batches, in Feed order).
// Only lines that pass a plugin's prefilter (one of its literals,
// confirmed by the text around it where the manifest asks for that) are
// sent to it, in batches of up to BatchLines lines or BatchBytes bytes; a
// full batch is sent at once, the rest on Flush. Until the plugins are
// loaded, the last 4×BatchLines lines are kept.
func (p *Parser) Feed(stream, line string) {
	_ = stream
	if limit := p.h.cfg.MaxLineBytes; len(line) > limit {
		line = line[:limit]
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.targets == nil && !p.resolve(context.Background(), false) {
		p.backlog = append(p.backlog, line)
		if over := len(p.backlog) - 4*p.h.cfg.BatchLines; over > 0 {
			p.backlog = p.backlog[over:]
		}
		return
	}
	p.add(context.Background(), line)
}

// Flush sends every pending batch, waiting (bounded by ctx) for plugins
// still loading if lines are waiting for them. Call it every ~200 ms while
// a run is live and once at its end.
func (p *Parser) Flush(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.targets == nil && (len(p.backlog) == 0 || !p.resolve(ctx, true)) {
		return // nothing fed yet, or the plugins are not there in time
	}
	for _, t := range p.targets {
		p.send(ctx, t)
	}
}

// Ready waits (bounded by ctx) until the progress plugins are loaded, so
// that no line fed afterwards waits in the backlog, where the oldest are
// dropped: what a Parser makes of an output then does not depend on how
// fast the plugins loaded.
func (p *Parser) Ready(ctx context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.targets == nil {
		p.resolve(ctx, true)
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
	s := p.state
	s.Metrics = maps.Clone(p.state.Metrics)
	return &s
}

// resolve finds the progress plugins. Without wait it fails while any is
// still loading. Lines in the backlog are then fed.
func (p *Parser) resolve(ctx context.Context, wait bool) bool {
	if !wait {
		for _, m := range p.h.modules {
			if m.kind != "" && m.kind != sdk.KindProgress {
				continue
			}
			select {
			case <-m.ready:
			default:
				return false
			}
		}
	}
	mods := p.h.byKind(ctx, sdk.KindProgress)
	if ctx.Err() != nil {
		return false
	}
	p.targets = make([]*parseTarget, 0, len(mods))
	for _, m := range mods {
		f, errs := prefilter.Cached(m.manifest.Prefilter, m.manifest.PrefilterConfirm)
		for _, err := range errs {
			p.h.log.Warn("plugin prefilter entry ignored", "plugin", m.manifest.Name, "err", err)
		}
		p.targets = append(p.targets, &parseTarget{m: m, filter: f})
	}
	backlog := p.backlog
	p.backlog = nil
	for _, l := range backlog {
		p.add(ctx, l)
	}
	return true
}

func (p *Parser) add(ctx context.Context, line string) {
	for _, t := range p.targets {
		if !t.filter.Match(line) {
			continue
		}
		t.lines = append(t.lines, line)
		t.bytes += len(line)
		if len(t.lines) >= p.h.cfg.BatchLines || t.bytes >= p.h.cfg.BatchBytes {
			p.send(ctx, t)
		}
	}
}

// send calls the plugin with t's batch and merges the updates into state.
// A failing plugin loses the batch; the run goes on.
func (p *Parser) send(ctx context.Context, t *parseTarget) {
	if len(t.lines) == 0 {
		return
	}
	in := sdk.ParseInput{Lines: t.lines}
	if p.updated {
		in.Last = &p.state // encoded right here, not kept
	}
	var input any = in // encoding/json words the error, if any
	if b, err := in.AppendJSONNoEscapeHTML(p.buf[:0]); err == nil {
		p.buf, input = b, encodedInput(b)
	}
	var out sdk.ParseOutput
	ok, err := p.h.invoke(ctx, t.m, exportParse, input, &out)
	t.lines, t.bytes = t.lines[:0], 0 // encoded: the array can be reused
	if err != nil || !ok {
		return
	}
	for _, u := range out.Updates {
		p.state.Merge(u)
		p.updated = true
	}
}
