package daemon

import (
	"context"
	"testing"
)

// A run printing 5 000 progress lines flat out reaches the progress plugin
// in full batches; the plugin answers each batch with the updates a history
// needs (up to 64), not one folded update, so the loss curve keeps hundreds
// of points (before, such a burst kept a point or so per batch: ~20 here).
func TestMetricsOfABurstKeepTheirShape(t *testing.T) {
	d := startDaemonWithPlugins(t)
	ctx := context.Background()
	// Load the progress plugin first: lines printed while it loads wait in
	// a bounded backlog.
	d.wait(t, d.run(t, "sh", "-c", `echo '##PROGRESS## {"step": 1}'`).ID)
	script := `awk 'BEGIN { for (i = 1; i <= 5000; i++) printf "##PROGRESS## {\"step\": %d, \"total\": 5000, \"metrics\": {\"loss\": %.6f}}\n", i, 10 / i }'`
	r := d.run(t, "sh", "-c", script)
	if got := d.wait(t, r.ID); got.State != "succeeded" {
		t.Fatalf("run %s", got.State)
	}
	m, err := d.c.Metrics(ctx, r.ID, "loss")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 1 {
		t.Fatalf("series %+v", m.Series)
	}
	s := m.Series[0]
	if len(s.Step) < 300 {
		t.Fatalf("%d points of loss (of %d samples) for 5000 steps printed in a burst, want at least 300", len(s.Step), s.Total)
	}
	t.Logf("%d points of loss, %d samples", len(s.Step), s.Total)
	// The shape follows the loss, 10/step: steps rise, and each point's
	// value is the loss of its step.
	for i, step := range s.Step {
		v := float64(s.Value[i])
		if want := 10 / float64(step); !(v >= want*0.999 && v <= want*1.001) { // NaN fails too
			t.Fatalf("point %d: step %d loss %v, want %g", i, step, v, want)
		}
		if i > 0 && step <= s.Step[i-1] {
			t.Fatalf("point %d: step %d after %d", i, step, s.Step[i-1])
		}
	}
	if last := s.Step[len(s.Step)-1]; last != 5000 {
		t.Errorf("last point at step %d, want 5000", last)
	}
}
