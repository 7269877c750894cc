package daemon

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// End to end: a real process prints a loss that goes NaN (nanoGPT's
// shape), and the run's progress, its failure and its metric history all
// say so: progress loss=NaN on the wire as "NaN", a NAN_LOSS failure, and
// a last history point that is NaN, counted as non-finite.
func TestNonFiniteLossEndToEnd(t *testing.T) {
	d := startDaemonWithPlugins(t)
	ctx := context.Background()
	// A first run loads the progress plugin (see TestMetricsOverTheAPI).
	d.wait(t, d.run(t, "sh", "-c", `echo '##PROGRESS## {"step": 1}'`).ID)
	script := `for i in 1 2 3; do echo "iter $i: loss 2.$i, time 10.0ms, mfu 1.00%"; sleep 0.2; done
for i in 4 5; do echo "iter $i: loss nan, time 10.0ms, mfu 1.00%"; sleep 0.2; done
exit 1`
	r := d.wait(t, d.run(t, "sh", "-c", script).ID)
	if r.State != "failed" {
		t.Fatalf("run %s, want failed", r.State)
	}
	if r.Progress == nil || r.Progress.Step != 5 || !math.IsNaN(r.Progress.Metrics["loss"]) {
		t.Fatalf("progress %+v, want step 5 with loss NaN", r.Progress)
	}
	b, err := json.Marshal(r.Progress)
	if err != nil || !strings.Contains(string(b), `"loss":"NaN"`) {
		t.Fatalf("progress as JSON: %s, %v", b, err)
	}
	if r.Failure == nil || r.Failure.Code != sdk.CodeNaNLoss {
		t.Errorf("failure %+v, want %s", r.Failure, sdk.CodeNaNLoss)
	}
	m, err := d.c.Metrics(ctx, r.ID, "loss")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 1 {
		t.Fatalf("series %+v", m.Series)
	}
	s := m.Series[0]
	n := len(s.Value)
	if n < 2 || s.Total != 5 || !math.IsNaN(float64(s.Value[n-1])) || s.NonFinite == nil || s.NonFinite[n-1] == 0 || s.Min[n-1] != nil {
		t.Fatalf("loss history %+v: want its last point NaN, counted, with no min", s)
	}
	if v := float64(s.Value[0]); v != 2.1 || s.NonFinite[0] != 0 {
		t.Errorf("first point %v (non-finite %d), want 2.1", v, s.NonFinite[0])
	}
}
