package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeSucceededRuns stores n runs that went all the way to succeeded
// and closes the store; it returns their ids in order.
func writeSucceededRuns(t *testing.T, dir string, n int) []string {
	t.Helper()
	ctx := context.Background()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := 0; i < n; i++ {
		r := &Run{Sandbox: "process", Fingerprint: "fp", SubmitKey: NewID()}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		for _, st := range []State{Preparing, Running, Succeeded} {
			if _, err := s.Transition(ctx, r.ID, st, "test", nil); err != nil {
				t.Fatal(err)
			}
		}
		ids = append(ids, r.ID)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return ids
}

// CorruptWALAt overwrites bytes in the middle of the written part of
// the store's newest WAL and returns the file and offset.
func CorruptWALAt(t *testing.T, dir string, frac float64) (string, int64) {
	t.Helper()
	logs, err := listWALs(dir)
	if err != nil || len(logs) == 0 {
		t.Fatalf("no wal in %s: %v", dir, err)
	}
	p := logs[len(logs)-1].path
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := len(b)
	for end > 0 && b[end-1] == 0 {
		end-- // preallocated space
	}
	off := int64(float64(end) * frac)
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("runbox-fault-injected-garbage!!!"), off); err != nil {
		t.Fatal(err)
	}
	return p, off
}

// Fault: bytes overwritten in the middle of the store's WAL -> Open refuses with ErrCorrupt naming the WAL; Salvage keeps a backup and recovers the writes before and after the damage
func TestFaultCorruptWAL(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	ids := writeSucceededRuns(t, dir, 60)
	wal, _ := CorruptWALAt(t, dir, 0.5)

	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(wal)) {
		t.Fatalf("open of a store with a damaged wal: got %v, want ErrCorrupt naming %s", err, filepath.Base(wal))
	}
	s, rep, err := Salvage(dir, Options{})
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	defer s.Close()
	t.Logf("salvage: %+v repair: %+v", rep, rep.Repair)
	if rep.AfterDamage == 0 || rep.WAL != filepath.Base(wal) {
		t.Fatalf("salvage found no writes past the damage: %+v", rep)
	}
	if b, err := os.ReadFile(filepath.Join(rep.Backup, filepath.Base(wal))); err != nil || len(b) == 0 {
		t.Fatalf("backup %s lacks the damaged wal: %v", rep.Backup, err)
	}
	succeeded := 0
	for _, id := range ids {
		if r, err := s.GetRun(ctx, id); err == nil && r.State == Succeeded {
			succeeded++
		}
	}
	// The damaged bytes cost a few writes; the runs after them must be whole.
	last, err := s.GetRun(ctx, ids[len(ids)-1])
	if err != nil || last.State != Succeeded || succeeded < len(ids)-3 {
		t.Fatalf("after salvage %d/%d runs succeeded, last %v (%v)", succeeded, len(ids), last, err)
	}
	chk, err := s.Check(ctx)
	if err != nil || !chk.OK() {
		t.Fatalf("check after salvage: %v %v", chk.Problems, err)
	}
	listed, err := s.ListRuns(ctx, Filter{States: []State{Succeeded}})
	if err != nil || len(listed) != succeeded {
		t.Fatalf("index lists %d succeeded runs, records say %d (%v)", len(listed), succeeded, err)
	}
	// The salvaged store takes writes and opens cleanly afterwards.
	if err := s.CreateRun(ctx, &Run{Sandbox: "process"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := openTest(t, dir)
	if _, err := s2.GetRun(ctx, ids[len(ids)-1]); err != nil {
		t.Fatal(err)
	}
}

// A torn tail (a crash mid-write) is not damage: Open accepts it.
func TestTornWALTailIsNotCorruption(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "store")
	writeSucceededRuns(t, dir, 10)
	CorruptWALAt(t, dir, 0.999)
	s := openTest(t, dir)
	if chk, err := s.Check(context.Background()); err != nil || !chk.OK() {
		t.Fatalf("check: %v %v", chk, err)
	}
}
