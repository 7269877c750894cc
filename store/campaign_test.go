package store

import (
	"context"
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
