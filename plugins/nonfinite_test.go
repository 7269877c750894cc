package plugins

import (
	"context"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// The built-in progress plugin's answer with a NaN loss reaches the host's
// state (decoded from "NaN"), every update is handed on, and the batches
// after it still go out: the state with the NaN is encoded into each
// one's ParseInput.Last (before, the answer failed to encode in the guest
// and the batch was lost, and later batches could not send the state).
func TestParserNonFiniteMetrics(t *testing.T) {
	h, logs := newTestHost(t, Config{Builtins: builtins(), BatchLines: 2})
	p := h.NewParser()
	var mu sync.Mutex
	var losses []float64
	p.OnUpdate(func(s sdk.Progress) {
		mu.Lock()
		defer mu.Unlock()
		if v, ok := s.Metrics["loss"]; ok {
			losses = append(losses, v)
		}
	})
	p.Ready(context.Background())
	for _, l := range []string{
		"iter 1: loss 2.5, time 10.00ms, mfu 1.00%",
		"iter 2: loss nan, time 10.00ms, mfu 1.00%",
		"iter 3: loss -inf, time 10.00ms, mfu 1.00%",
		"iter 4: loss nan, time 10.00ms, mfu 1.00%",
		"iter 5: loss 1.5, time 10.00ms, mfu 1.00%",
		"iter 6: loss Infinity, time 10.00ms, mfu 1.00%",
	} {
		p.Feed("stdout", l)
	}
	p.Flush(context.Background())
	s := p.State()
	if s == nil || s.Step != 6 || !math.IsInf(s.Metrics["loss"], 1) {
		t.Fatalf("state %+v, want step 6 with loss +Inf", s)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(losses) == 0 || !math.IsInf(losses[len(losses)-1], 1) {
		t.Fatalf("updates saw losses %v", losses)
	}
	var nan, ninf bool
	for _, v := range losses {
		nan = nan || math.IsNaN(v)
		ninf = ninf || math.IsInf(v, -1)
	}
	if !nan || !ninf {
		t.Errorf("updates saw losses %v: want a NaN and a -Inf among them", losses)
	}
	if strings.Contains(logs.String(), "not sent") || strings.Contains(logs.String(), "unsupported value") {
		t.Errorf("a batch was lost:\n%s", logs.String())
	}
}

// A line with a step and no metric ("checkpoint at step 10") moves the
// step but hands on no metric: the history does not record the last loss
// again at step 10 (issue #24: stair-steps in every chart). The state
// keeps the last loss.
func TestUpdateWithoutMetricsRecordsNone(t *testing.T) {
	h, _ := newTestHost(t, Config{Builtins: builtins(), BatchLines: 1})
	p := h.NewParser()
	var mu sync.Mutex
	type seen struct {
		step int64
		loss bool
	}
	var got []seen
	p.OnUpdate(func(s sdk.Progress) {
		mu.Lock()
		defer mu.Unlock()
		_, ok := s.Metrics["loss"]
		got = append(got, seen{s.Step, ok})
	})
	p.Ready(context.Background())
	for _, l := range []string{"step 5: loss 2.5", "checkpoint at step 10", "step 15: loss 1.5"} {
		p.Feed("stdout", l)
		p.Flush(context.Background())
	}
	s := p.State()
	if s == nil || s.Step != 15 || s.Metrics["loss"] != 1.5 {
		t.Fatalf("state %+v", s)
	}
	mu.Lock()
	defer mu.Unlock()
	at10 := false
	for _, g := range got {
		at10 = at10 || g.step == 10
		if g.step == 10 && g.loss {
			t.Fatalf("the update at step 10 re-recorded the loss: %+v", got)
		}
	}
	if !at10 {
		t.Fatalf("updates %+v: no update at step 10", got)
	}
	if len(got) < 3 || !got[0].loss || !got[len(got)-1].loss {
		t.Fatalf("updates %+v: want the losses at steps 5 and 15", got)
	}
}
