package plugins

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"sync"

	"github.com/runbox/runbox/sdk"
)

// answer is one plugin's answer to a call askEach made.
type answer[T any] struct {
	m   *module
	out T
}

// asked is where one plugin's call ends up: not yet (done false), no
// answer (not a plugin of the kind, not loaded, nothing to say, failed), or
// an answer.
type asked[T any] struct {
	m        *module
	done     bool
	answered bool
	out      T
	err      error
}

// askEach calls export fn with in on every plugin of kind, side by side:
// each waits for its own module to load (bounded by LoadTimeout) and
// makes its call (bounded by CallTimeout), so that one slow or hanging
// plugin holds up no other's answer. It returns when every call is done
// or ctx ends, with the answers that came, highest priority first, and the
// errors of plugins that failed or were still busy when ctx ended.
func askEach[T any](ctx context.Context, h *Host, kind sdk.Kind, fn string, in any) ([]answer[T], []error) {
	b, err := json.Marshal(in)
	if err != nil {
		return nil, []error{fmt.Errorf("encode %s input: %w", fn, err)}
	}
	var mu sync.Mutex
	var calls []*asked[T]
	h.refresh()
	mods := h.mods()
	done := make(chan struct{}, len(mods)) // late calls never block
	for _, m := range mods {
		if m.kind != "" && m.kind != kind {
			continue
		}
		c := &asked[T]{m: m}
		calls = append(calls, c)
		go func() {
			defer func() { done <- struct{}{} }()
			var out T
			var ok bool
			var err error
			if m.wait(ctx) && m.manifest.Has(kind) && m.clash() == nil {
				ok, err = h.invoke(ctx, m, fn, encodedInput(b), &out)
			}
			mu.Lock()
			c.done, c.answered, c.out, c.err = true, ok && err == nil, out, err
			mu.Unlock()
		}()
	}
wait:
	for range calls {
		select {
		case <-done:
		case <-ctx.Done():
			break wait
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var answers []answer[T]
	var errs []error
	for _, c := range calls {
		switch {
		case c.done && c.answered && c.m.clash() != nil:
			// Another plugin of its name loaded meanwhile: neither counts.
		case c.done && c.answered:
			answers = append(answers, answer[T]{m: c.m, out: c.out})
		case c.done && c.err != nil:
			errs = append(errs, c.err)
		case !c.done && c.m.loaded() && c.m.manifest.Has(kind):
			errs = append(errs, fmt.Errorf("plugin %s: %s: no answer before the caller gave up: %w", c.m.manifest.Name, fn, ctx.Err()))
		}
	}
	sort.SliceStable(answers, func(i, j int) bool { return answers[i].m.manifest.Priority > answers[j].m.manifest.Priority })
	return answers, errs
}
