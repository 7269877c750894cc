package progress

import (
	"testing"

	"github.com/runbox/runbox/sdk"
)

// The generic structure reader's percentage key: lines written for its
// shape (no corpus line), and the traps it must not read.
func TestPercentKey(t *testing.T) {
	tests := []struct {
		line string
		want float64
	}{
		{`{"progress": 37.5, "loss": 1.25, "lr": 0.001}`, 37.5},
		{`{'percent': 80, 'train_loss': 0.4}`, 80},
		{`pct=12.5% loss=0.9`, 12.5},
		{`percentage: 55 loss: 2.1`, 55},
		// traps: a count of things in progress, a fraction, past 100, no number
		{`{"in_progress": 3, "loss": 0.5}`, 0},
		{`{"progress": 0.5, "loss": 0.5}`, 0},
		{`{"progress": 250, "loss": 0.5}`, 0},
		{`progress: done, loss: 0.5`, 0},
	}
	for _, tt := range tests {
		got, ok := percentKey(tt.line)
		if !ok {
			got = 0
		}
		if got != tt.want {
			t.Errorf("percentKey(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// Through the whole plugin: a custom JSON logger's record with a
// percentage key and metrics is progress at that percentage; the same
// key on a line with no metric (a download) is not.
func TestPercentKeyRecord(t *testing.T) {
	out := Parse(sdk.ParseInput{Lines: []string{`{"progress": 37.5, "loss": 1.25, "lr": 0.001}`}})
	if len(out.Updates) == 0 || out.Updates[len(out.Updates)-1].Percentage != 37.5 {
		t.Errorf("JSON record with a progress key: %+v", out.Updates)
	}
	out = Parse(sdk.ParseInput{Lines: []string{`{"progress": 37.5, "file": "weights.bin"}`}})
	for _, u := range out.Updates {
		if u.Percentage != 0 {
			t.Errorf("a download's progress key became the run's: %+v", out.Updates)
		}
	}
}
