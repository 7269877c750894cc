package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// A sweep record, its members' index and a run's campaign part survive a
// reopen, list by sweep, and pass the store check (doctor).
func TestSweepsAndMembers(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	ctx := context.Background()
	sw := &Sweep{Name: "grid", Command: []string{"train", "{lr}"}, ParamNames: []string{"lr"},
		Sets: []map[string]string{{"lr": "1"}, {"lr": "2"}}, Parallel: 1}
	if err := s.PutSweep(ctx, sw); err != nil {
		t.Fatal(err)
	}
	for i, set := range sw.Sets {
		r := &Run{Sandbox: "process", Campaign: &Campaign{Sweep: sw.ID, Index: i, Params: set, GPUs: 1, Devices: []string{"0"}}}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.CreateRun(ctx, &Run{Sandbox: "process"}); err != nil { // not a member
		t.Fatal(err)
	}
	if _, err := s.UpdateSweep(ctx, sw.ID, func(x *Sweep) error { x.Complete = true; return nil }); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s = openTest(t, dir)
	got, err := s.GetSweep(ctx, sw.ID[:10])
	if err != nil || !got.Complete || len(got.Sets) != 2 {
		t.Fatalf("sweep %+v %v", got, err)
	}
	members, err := s.ListRuns(ctx, Filter{Sweep: sw.ID})
	if err != nil || len(members) != 2 {
		t.Fatalf("%d members, %v", len(members), err)
	}
	for _, m := range members {
		if m.Campaign == nil || m.Campaign.Params["lr"] == "" || m.Campaign.Devices[0] != "0" {
			t.Errorf("member %+v", m.Campaign)
		}
	}
	l, err := s.ListSweeps(ctx)
	if err != nil || len(l) != 1 {
		t.Fatalf("sweeps %v %v", l, err)
	}
	rep, err := s.Check(ctx)
	if err != nil || !rep.OK() {
		t.Fatalf("check: %+v %v", rep, err)
	}
	if _, err := s.GetSweep(ctx, "nosuch"); !IsNotFound(err) {
		t.Errorf("unknown sweep: %v", err)
	}
}

// Sweeps and plans are named as runs are: @last is the newest, @last~N
// the Nth before it; past the oldest, or with no sweep yet, the answer
// says so.
func TestLastNamesTheNewestSweepAndPlan(t *testing.T) {
	s := openTest(t, t.TempDir())
	ctx := context.Background()
	if _, err := s.GetSweep(ctx, "@last"); !IsNotFound(err) || !strings.Contains(err.Error(), "there are no sweeps yet") {
		t.Errorf("@last with no sweep: %v", err)
	}
	var sweeps, plans []string
	for i := range 3 {
		sw := &Sweep{Name: fmt.Sprint("grid", i), Command: []string{"true"}}
		if err := s.PutSweep(ctx, sw); err != nil {
			t.Fatal(err)
		}
		p := &Plan{Command: []string{"true"}}
		if err := s.PutPlan(ctx, p); err != nil {
			t.Fatal(err)
		}
		sweeps, plans = append(sweeps, sw.ID), append(plans, p.ID)
	}
	for _, tt := range []struct {
		q    string
		want int // index into sweeps and plans; -1: not found
		says string
	}{
		{"@last", 2, ""},
		{"@LAST~1", 1, ""},
		{" @last~2", 0, ""},
		{"@last~3", -1, "there are only 3 sweeps"},
		{"@last~x", -1, "write @last for the newest sweep"},
		{"@last~-1", -1, "write @last"},
	} {
		sw, err := s.GetSweep(ctx, tt.q)
		if tt.want < 0 {
			if !IsNotFound(err) || !strings.Contains(err.Error(), tt.says) {
				t.Errorf("sweep %q: %v, want not found saying %q", tt.q, err, tt.says)
			}
			continue
		}
		if err != nil || sw.ID != sweeps[tt.want] {
			t.Errorf("sweep %q: %v %v, want %s", tt.q, sw, err, sweeps[tt.want])
		}
		if p, err := s.GetPlan(ctx, tt.q); err != nil || p.ID != plans[tt.want] {
			t.Errorf("plan %q: %v %v, want %s", tt.q, p, err, plans[tt.want])
		}
	}
}
