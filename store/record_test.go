package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A record is kept beside its run, read back as written, refused for a
// run that does not exist, and known to the store's check (doctor would
// otherwise call it a key of no table and repair it away).
func TestRecordIsKeptAndChecked(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	r := &Run{State: Succeeded}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Record(ctx, r.ID); err != nil || got != nil {
		t.Fatalf("no record yet: %q %v", got, err)
	}
	if err := s.PutRecord(ctx, r.ID, []byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Record(ctx, r.ID); err != nil || string(got) != `{"version":1}` {
		t.Fatalf("record %q %v", got, err)
	}
	if err := s.PutRecord(ctx, "01nosuchrun0000000000000000", []byte(`{}`)); err == nil {
		t.Fatal("a record of no run was kept")
	}
	rep, err := s.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %+v %v", rep, err)
	}
	if err := s.PutRecord(ctx, r.ID, []byte(`{not json`)); err != nil {
		t.Fatal(err)
	}
	if rep, _ := s.Check(ctx); rep.OK() || !strings.Contains(strings.Join(rep.Problems, "\n"), "run record") {
		t.Fatalf("a torn record is not reported: %+v", rep)
	}
}

// The machine's series do not take the run's own metrics' places: a run
// with MaxRunSeries metrics keeps them all beside the sys/ ones, and each
// kind has its own bound.
func TestSysSeriesHaveTheirOwnBound(t *testing.T) {
	h := &MetricHistory{RunID: "r"}
	now := time.Now()
	for i := range MaxSysSeries {
		if !h.Add(fmt.Sprintf("%sm%d", SysPrefix, i), 1, now, 1) {
			t.Fatalf("sys series %d dropped", i)
		}
	}
	if h.Add(SysPrefix+"one-too-many", 1, now, 1) {
		t.Fatal("sys series over their bound kept")
	}
	for i := range MaxRunSeries {
		if !h.Add(fmt.Sprintf("own%02d", i), 1, now, 1) {
			t.Fatalf("own series %d dropped beside the machine's", i)
		}
	}
	if h.Add("own-one-too-many", 1, now, 1) || h.Dropped != 2 {
		t.Fatalf("own series over their bound: dropped %d", h.Dropped)
	}
}
