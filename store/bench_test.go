package store

import (
	"context"
	"testing"
)

// BenchmarkCreateRunTransition measures a run's life as the daemon writes
// it: create, then three durable (fsynced) transitions.
//
//	go test ./store -run '^$' -bench . -benchmem
func BenchmarkCreateRunTransition(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, b.TempDir())
	b.ReportAllocs()
	for b.Loop() {
		r := &Run{Sandbox: "process", Fingerprint: "bench"}
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		for _, st := range []State{Preparing, Running, Succeeded} {
			if _, err := s.Transition(ctx, r.ID, st, "bench", nil); err != nil {
				b.Fatal(err)
			}
		}
	}
}

func BenchmarkListRuns(b *testing.B) {
	ctx := context.Background()
	s := openTest(b, b.TempDir())
	for i := 0; i < 2000; i++ {
		r := &Run{}
		if i%10 == 0 {
			r.State = Running
		} else {
			r.State = Succeeded
		}
		if err := s.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct {
		name string
		f    Filter
	}{
		{"latest50", Filter{Limit: 50}},
		{"active", Filter{States: []State{Queued, Preparing, Smoke, Running}}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.ListRuns(ctx, bc.f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
