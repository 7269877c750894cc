package progress

import (
	"fmt"
	"slices"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// counterLines is a loop that prints its iteration with no total and no
// step word, between lines of other shapes, and starts its count again
// (a second pass); its clock rises on every line and must count for
// nothing.
var counterLines = []string{
	"2024-05-17 10:00:01 [it 100] loss=0.90 lr=3e-4",
	"2024-05-17 10:00:02 saving nothing",
	"2024-05-17 10:00:03 [it 110] loss=0.85 lr=3e-4",
	"2024-05-17 10:00:04 grad_norm=1.5",
	"2024-05-17 10:00:05 [it 120] loss=0.80 lr=3e-4",
	"2024-05-17 10:00:06 [it 120] loss=0.79 lr=3e-4", // printed twice: no new step
	"2024-05-17 10:00:07 [it 130] loss=0.75 lr=3e-4",
	"2024-05-17 10:00:08 [it 10] loss=0.70 lr=1e-4", // a new pass: said once it rises
	"2024-05-17 10:00:09 [it 20] loss=0.65 lr=1e-4",
}

// feed runs lines through Parse in the batches cuts makes (cut k ends a
// batch after line k), as the host does: the state so far as Last, the
// plugin's State back with the next batch. It returns the merged state
// and the (step, loss) of every update with a loss, in order.
func feed(t *testing.T, lines []string, cuts []int) (sdk.Progress, []string) {
	t.Helper()
	var acc sdk.Progress
	var last *sdk.Progress
	state := ""
	var hist []string
	from := 0
	for _, c := range append(slices.Clone(cuts), len(lines)) {
		if c <= from {
			continue
		}
		out := Parse(sdk.ParseInput{Lines: lines[from:c], Last: last, State: state})
		state = out.State
		for _, u := range out.Updates {
			acc.Merge(u)
			if v, ok := u.Metrics["loss"]; ok {
				hist = append(hist, fmt.Sprintf("%d:%g", acc.Step, v))
			}
		}
		if len(out.Updates) > 0 {
			cp := acc
			last = &cp
		}
		from = c
	}
	return acc, hist
}

func TestCounterAcrossLinesOfOneShape(t *testing.T) {
	got, hist := feed(t, counterLines, nil)
	if got.Step != 20 || got.Total != 0 || got.Percentage != 0 {
		t.Fatalf("state %+v, want step 20 (the second pass's counter), no total", got)
	}
	want := []string{"0:0.9", "110:0.85", "120:0.8", "120:0.79", "130:0.75", "130:0.7", "20:0.65"}
	if !slices.Equal(hist, want) {
		t.Fatalf("history %v, want %v", hist, want)
	}
}

// The answer must not depend on where the host cut the batches: every
// line a batch of its own, and every cut into two batches, give what one
// batch gives.
func TestCounterDoesNotDependOnBatching(t *testing.T) {
	want, wantHist := feed(t, counterLines, nil)
	var each []int
	for k := 1; k < len(counterLines); k++ {
		each = append(each, k)
		got, hist := feed(t, counterLines, []int{k})
		if got.Step != want.Step || !slices.Equal(hist, wantHist) {
			t.Errorf("cut after line %d: step %d, history %v; one batch: %d, %v", k, got.Step, hist, want.Step, wantHist)
		}
	}
	got, hist := feed(t, counterLines, each)
	if got.Step != want.Step || !slices.Equal(hist, wantHist) {
		t.Errorf("a line per batch: step %d, history %v; one batch: %d, %v", got.Step, hist, want.Step, wantHist)
	}
}

// A counter does not speak over a format that knows better: once the
// run has a total (a bar), or a step from a named reader, lines of one
// shape do not move the step.
func TestCounterYieldsToKnownProgress(t *testing.T) {
	lines := []string{
		"Step 40/100",
		"[it 100] loss=0.90",
		"[it 110] loss=0.85",
	}
	got, _ := feed(t, lines, nil)
	if got.Step != 40 || got.Total != 100 {
		t.Fatalf("state %+v, want step 40/100 kept", got)
	}
	// clocks, dates, decimals and whole values after their names rising
	// are not counters
	lines = []string{
		"2024-05-17 10:00:01,123 loss=0.90 grad_norm: 3 n=1",
		"2024-05-17 10:00:02,456 loss=0.85 grad_norm: 5 n=2",
		"2024-05-17 10:00:03,789 loss=0.80 grad_norm: 7 n=3",
	}
	if got, _ := feed(t, lines, nil); got.Step != 0 {
		t.Fatalf("state %+v: a clock counted as progress", got)
	}
}

// The memo survives a host that never sends it back (an older host):
// the plugin then reads each batch alone, as before.
func TestCounterMemoDecode(t *testing.T) {
	m := decodeMemo("c1;s=130;ff:1,2;@shards=17")
	if m.step != 130 || len(m.shapes) != 1 || m.shapes[0].h != 0xff || m.shapes[0].n != 2 || m.entries[0] != (entryMemo{"shards", 17}) {
		t.Fatalf("decoded %+v", m)
	}
	if got := m.encode(); got != "c1;s=130;ff:1,2;@shards=17" {
		t.Fatalf("encode = %q", got)
	}
	if m := decodeMemo("garbage;;"); m.step != 0 || len(m.shapes) != 0 {
		t.Fatalf("garbage decoded to %+v", m)
	}
}
