package store

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkOpenWALCheck measures what Open adds to read every WAL for
// damage, on a store whose WAL holds nearly a full memtable (1 MiB, the
// most a WAL holds before Pebble rotates it): the damage scan alone, and
// a whole Open for comparison (on a copy each time: opening flushes).
//
//	go test ./store -run '^$' -bench OpenWALCheck -benchtime 50x
func BenchmarkOpenWALCheck(b *testing.B) {
	ctx := context.Background()
	dir := filepath.Join(b.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 800; i++ {
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
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	scans, _, err := checkWALs(dir)
	if err != nil {
		b.Fatal(err)
	}
	var batches int
	for _, w := range scans {
		batches += len(w.batches)
	}
	b.Run("scan", func(b *testing.B) {
		for b.Loop() {
			if _, bad, err := checkWALs(dir); err != nil || bad != nil {
				b.Fatal(err, bad)
			}
		}
		b.ReportMetric(float64(batches), "batches")
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			cp := filepath.Join(b.TempDir(), "store")
			if err := copyDir(dir, cp); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			s, err := Open(cp, Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			_ = s.Close()
			b.StartTimer()
		}
	})
}
