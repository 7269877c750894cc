package store

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Check reads every record and finds each kind of inconsistency; Repair
// removes what does not decode and rebuilds the indexes.
func TestCheckAndRepair(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		damage func(t *testing.T, s *Store, id string)
		want   string // a substring of one problem
	}{
		{"run record not JSON", func(t *testing.T, s *Store, id string) {
			rawSet(t, s, runKey(id), []byte("{not json"))
		}, "does not decode"},
		{"stale state index", func(t *testing.T, s *Store, id string) {
			rawSet(t, s, indexKey(idxState, string(Queued), time.Now(), id), nil)
		}, "matches no run record"},
		{"missing time index", func(t *testing.T, s *Store, id string) {
			r, _ := s.GetRun(ctx, id)
			rawDelete(t, s, indexKey(idxTime, "", r.CreatedAt, id))
		}, "missing its index entry"},
		{"submit key of no run", func(t *testing.T, s *Store, id string) {
			rawSet(t, s, submitKey("orphan"), []byte("nosuchrun"))
		}, "has no record"},
		{"key of no table", func(t *testing.T, s *Store, id string) {
			rawSet(t, s, []byte("z/what"), []byte("?"))
		}, "belongs to no table"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, filepath.Join(t.TempDir(), "store"))
			r := &Run{Sandbox: "process", PlanID: "p1", Fingerprint: "fp"}
			if err := s.CreateRun(ctx, r); err != nil {
				t.Fatal(err)
			}
			if chk, err := s.Check(ctx); err != nil || !chk.OK() || chk.Runs != 1 {
				t.Fatalf("check of a sound store: %+v %v", chk, err)
			}
			tt.damage(t, s, r.ID)
			chk, err := s.Check(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if chk.OK() || !strings.Contains(strings.Join(chk.Problems, "\n"), tt.want) {
				t.Fatalf("check found %q, want a problem with %q", chk.Problems, tt.want)
			}
			if _, err := s.Repair(ctx); err != nil {
				t.Fatal(err)
			}
			if chk, err := s.Check(ctx); err != nil || !chk.OK() {
				t.Fatalf("check after repair: %q %v", chk.Problems, err)
			}
		})
	}
}

func rawSet(t *testing.T, s *Store, k, v []byte) {
	t.Helper()
	if err := s.db.Set(k, v, nil); err != nil {
		t.Fatal(err)
	}
}

func rawDelete(t *testing.T, s *Store, k []byte) {
	t.Helper()
	if err := s.db.Delete(k, nil); err != nil {
		t.Fatal(err)
	}
}

// Records larger than a WAL block (32 KiB) are split into chunks; a sound
// store with them is not called damaged, and one past the damage is put
// back whole.
func TestSalvageMultiBlockRecords(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("0123456789abcdef", 5000) // 80 KB
	var ids []string
	for i := 0; i < 6; i++ {
		r := &Run{Sandbox: "process", Labels: map[string]string{"big": big}}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Sound, it opens without a false alarm (on a copy: opening flushes
	// the WAL into a table).
	sound := dir + ".sound"
	if err := copyDir(dir, sound); err != nil {
		t.Fatal(err)
	}
	openTest(t, sound)
	CorruptWALAt(t, dir, 0.3)
	s, rep, err := Salvage(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	last, err := s.GetRun(ctx, ids[len(ids)-1])
	if err != nil || last.Labels["big"] != big || rep.AfterDamage == 0 {
		t.Fatalf("the big run past the damage: %v (report %+v)", err, rep)
	}
}

// WALs that Pebble rotated and recycled hold an older log's chunks past
// their own; those are not damage.
func TestRecycledWALsAreSound(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	opts := Options{MemTableSize: 64 << 10}
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	pad := strings.Repeat("x", 2000)
	for i := 0; i < 400; i++ {
		r := &Run{Sandbox: "process", Reason: pad}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Transition(ctx, r.ID, Running, pad, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	logs, err := listWALs(dir)
	if err != nil {
		t.Fatal(err)
	}
	scans, bad, err := checkWALs(dir)
	for _, w := range scans {
		t.Logf("wal %d: %d batches, ends at %d", w.num, len(w.batches), w.breakAt)
	}
	if err != nil || bad != nil {
		t.Fatalf("%d wals after rotation: damage %v, err %v", len(logs), bad, err)
	}
	if logs[len(logs)-1].num < 5 {
		t.Fatalf("only %d wals: the test did not make Pebble rotate", len(logs))
	}
	s, err = Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if chk, err := s.Check(ctx); err != nil || !chk.OK() || chk.Runs != 400 {
		t.Fatalf("check: %+v %v", chk, err)
	}
}
