package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// TestShortIDsUnique100k writes 100 000 runs into a real Pebble store (in
// batches of 10 000 through the same staging CreateRun uses, so the test
// stays fast) and checks that every run got a short id of at most 8
// characters, no two the same, each leading back to its run; that the
// numbering goes on after a reopen; and that the full id still works.
func TestShortIDsUnique100k(t *testing.T) {
	const total, batch = 100_000, 10_000
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{MinFreeBytes: -1})
	if err != nil {
		t.Fatal(err)
	}
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ids := make([]string, 0, total)
	for done := 0; done < total; done += batch {
		err := s.writer(ctx, false, func(db *pebble.DB, b *pebble.Batch) error {
			for i := done; i < done+batch; i++ {
				r := &Run{ID: NewID(), CreatedAt: base.Add(time.Duration(i) * time.Millisecond), State: Queued, Attempt: 1}
				if err := s.stageRun(db, b, r); err != nil {
					return err
				}
				ids = append(ids, r.ID)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	runs, err := s.ListRuns(ctx, Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != total {
		t.Fatalf("listed %d runs, want %d", len(runs), total)
	}
	seen := make(map[string]string, total)
	for _, r := range runs {
		if r.Short == "" || len(r.Short) > 8 {
			t.Fatalf("run %s: short id %q is empty or longer than 8", r.ID, r.Short)
		}
		if other, dup := seen[r.Short]; dup {
			t.Fatalf("short id %q given to %s and %s", r.Short, other, r.ID)
		}
		seen[r.Short] = r.ID
	}
	// Every short id leads back to its run (a sample: each lookup is a
	// real Pebble seek, and 100 000 of them add nothing the sample lacks).
	for i := 0; i < total; i += 997 {
		r := runs[i]
		got, err := s.GetRun(ctx, r.Short)
		if err != nil || got.ID != r.ID {
			t.Fatalf("GetRun(%q) = %v, %v; want %s", r.Short, got, err, r.ID)
		}
		if got, err := s.GetRun(ctx, r.ID); err != nil || got.Short != r.Short {
			t.Fatalf("GetRun(full id %s) = %v, %v", r.ID, got, err)
		}
	}
	if runs[0].Short != strconv.Itoa(total) {
		t.Errorf("newest run is %q, want %d (numbers follow creation order)", runs[0].Short, total)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// After a reopen the counter goes on: no number is handed out twice.
	s = openTest(t, dir)
	r := &Run{}
	if err := s.CreateRun(ctx, r); err != nil {
		t.Fatal(err)
	}
	if want := strconv.Itoa(total + 1); r.Short != want {
		t.Errorf("first run after reopen: short id %q, want %s", r.Short, want)
	}
	if rep, err := s.Check(ctx); err != nil || !rep.OK() {
		t.Errorf("check after 100k runs: %v %v", rep.Problems, err)
	}
}

// TestResolveRun covers every way to name a run: full id, short id,
// @last, @last~N, id prefix, and the errors.
func TestResolveRun(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	if _, err := s.GetRun(ctx, "@last"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("@last in an empty store: %v, want not found", err)
	}
	base := time.Date(2026, 1, 2, 3, 0, 0, 0, time.UTC)
	minute := func(i int) int { return (i * 7) % 12 } // a permutation of 0..11
	for i := 0; i < 12; i++ {
		// Created out of order: @last follows creation time, not the
		// order of the writes or the numbers.
		r := &Run{ID: fmt.Sprintf("01abc%02d", i), CreatedAt: base.Add(time.Duration(minute(i)) * time.Minute)}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// newest(back) is the run created at minute 11-back.
	newest := func(back int) string {
		for i := 0; i < 12; i++ {
			if minute(i) == 11-back {
				return fmt.Sprintf("01abc%02d", i)
			}
		}
		panic("no such run")
	}
	tests := []struct {
		q, want string
		err     error
	}{
		{"01abc03", "01abc03", nil},
		{"  01ABC03 ", "01abc03", nil},
		{"1", "01abc00", nil},
		{"12", "01abc11", nil},
		{"13", "", ErrNotFound},
		{"@last", newest(0), nil},
		{"@last~0", newest(0), nil},
		{"@last~1", newest(1), nil},
		{"@LAST~11", newest(11), nil},
		{"@last~12", "", ErrNotFound},
		{"@last~-1", "", ErrNotFound},
		{"@last1", "", ErrNotFound},
		{"@last~x", "", ErrNotFound},
		{"01abc1", "", ErrAmbiguous},
		{"01abc", "", ErrAmbiguous},
		{"012", "", ErrNotFound}, // a leading 0 is an id prefix, never a short id
		{"", "", ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.q, func(t *testing.T) {
			r, err := s.GetRun(ctx, tc.q)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("GetRun(%q) = %v, %v; want %v", tc.q, r, err, tc.err)
				}
				return
			}
			if err != nil || r.ID != tc.want {
				t.Fatalf("GetRun(%q) = %v, %v; want %s", tc.q, r, err, tc.want)
			}
		})
	}
}

// TestShortIDUpgrade opens a store written before short ids (schema 1,
// runs without one) and checks that Open numbers its runs in creation
// order, records schema 2, and that new runs follow on.
func TestShortIDUpgrade(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openTest(t, dir)
	base := time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := 0; i < 5; i++ {
		r := &Run{ID: fmt.Sprintf("0old%d", i), CreatedAt: base.Add(time.Duration(5-i) * time.Hour)}
		if err := s.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// Make it a version 1 store: drop the numbers and their index.
	err := s.writer(ctx, true, func(db *pebble.DB, b *pebble.Batch) error {
		for i := 0; i < 5; i++ {
			id := fmt.Sprintf("0old%d", i)
			v, _ := get(db, runKey(id))
			r, err := decode[Run]("run", id, v)
			if err != nil {
				return err
			}
			old := *r
			r.Short = ""
			if err := putRun(b, &old, r); err != nil {
				return err
			}
		}
		return b.Set([]byte(schemaKey), []byte("1"), nil)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir)
	// Created newest first, so 0old4 is the oldest: number 1.
	for i := 0; i < 5; i++ {
		r, err := s.GetRun(ctx, strconv.Itoa(5-i))
		if err != nil || r.ID != fmt.Sprintf("0old%d", i) {
			t.Errorf("short id %d = %v, %v; want 0old%d", 5-i, r, err, i)
		}
	}
	v, closer, err := s.db.Get([]byte(schemaKey))
	if err != nil || string(v) != strconv.Itoa(SchemaVersion) {
		t.Errorf("schema after upgrade = %q, %v", v, err)
	}
	if closer != nil {
		closer.Close()
	}
	r := &Run{}
	if err := s.CreateRun(ctx, r); err != nil || r.Short != "6" {
		t.Errorf("new run after upgrade: short %q, %v; want 6", r.Short, err)
	}
	if rep, err := s.Check(ctx); err != nil || !rep.OK() {
		t.Errorf("check after upgrade: %v %v", rep.Problems, err)
	}
}

// TestShortIDKept: a run restored with the number it had keeps it; one
// whose number is taken gets the next; an update cannot change it.
func TestShortIDKept(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, t.TempDir())
	a := &Run{}
	if err := s.CreateRun(ctx, a); err != nil {
		t.Fatal(err)
	}
	b := &Run{Short: "7"}
	if err := s.CreateRun(ctx, b); err != nil || b.Short != "7" {
		t.Fatalf("restored run: short %q, %v; want 7", b.Short, err)
	}
	c := &Run{Short: a.Short}
	if err := s.CreateRun(ctx, c); err != nil || c.Short != "8" {
		t.Fatalf("run bringing a taken number: short %q, %v; want 8", c.Short, err)
	}
	if _, err := s.UpdateRun(ctx, a.ID, func(r *Run) error { r.Short = "99"; return nil }); err == nil {
		t.Error("an update changed the short id")
	}
}

// A salvaged store goes on numbering after its last run: Salvage opens
// the store its own way, and a counter left at zero would hand out 1
// again.
func TestShortIDAfterSalvage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := s.CreateRun(ctx, &Run{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, _, err = Salvage(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	r := &Run{}
	if err := s.CreateRun(ctx, r); err != nil || r.Short != "4" {
		t.Fatalf("first run after salvage: short %q, %v; want 4", r.Short, err)
	}
}
