package host

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/store"
)

// compare --sort and sweep status --sort refuse a column or metric that
// does not exist (they printed "sorted by best:nosuch", unsorted).
func TestUnknownSortKeysAreRefused(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	sw := te.sweepOf(t, sweepReq(t, "v", []string{"1", "2"}, 0, 0, "true", "{v}"))
	for _, r := range te.waitSweep(t, sw.ID).Runs {
		h := &store.MetricHistory{RunID: r.ID}
		h.Add("loss", 1, time.Now(), float64(r.Index))
		if err := te.st.PutMetrics(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct{ sort, want string }{
		{"bogus", "want one of created, duration, state, param:NAME, last:METRIC, best:METRIC"},
		{"best:nosuch", `no run has metric "nosuch" (the runs' metrics: loss)`},
		{"param:nosuch", `no run has param "nosuch"`},
	} {
		_, err := te.Compare(ctx, CompareQuery{Sweep: sw.ID, CompareOptions: record.CompareOptions{Sort: tc.sort}})
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("compare --sort %s: got %v, want %q", tc.sort, err, tc.want)
		}
	}
	if c, err := te.Compare(ctx, CompareQuery{Sweep: sw.ID, CompareOptions: record.CompareOptions{Sort: "-best:loss"}}); err != nil || c.Rows[0].Params["v"] != "2" {
		t.Errorf("compare --sort -best:loss: %v", err)
	}
	if _, err := te.SweepStatus(ctx, sw.ID, "nosuch"); !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "no member has a metric called nosuch (their metrics: loss)") {
		t.Errorf("sweep status --sort nosuch: %v", err)
	}
	if v, err := te.SweepStatus(ctx, sw.ID, "loss"); err != nil || v.Runs[0].Params["v"] != "1" {
		t.Errorf("sweep status --sort loss: %v", err)
	}
}
