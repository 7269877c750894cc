package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// damageLastRecord overwrites bytes inside the last record of the store's
// newest WAL, just before the EOF trailer its clean close wrote, and
// returns the WAL's path. It fails the test when there is no trailer.
func damageLastRecord(t *testing.T, dir string) string {
	t.Helper()
	logs, err := listWALs(dir)
	if err != nil || len(logs) == 0 {
		t.Fatalf("no wal in %s: %v", dir, err)
	}
	w := logs[len(logs)-1]
	b, err := os.ReadFile(w.path)
	if err != nil {
		t.Fatal(err)
	}
	var trailer [walRecycHeader]byte
	trailer[6] = 5
	binary.LittleEndian.PutUint32(trailer[7:], uint32(w.num)+1)
	at := bytes.LastIndex(b, trailer[:])
	if at < 64 {
		t.Fatalf("%s has no EOF trailer (was the store closed?)", w.path)
	}
	copy(b[at-48:], "runbox-fault!!!!")
	if err := os.WriteFile(w.path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return w.path
}

// Fault: the last record of a cleanly closed WAL overwritten -> Open refuses with ErrCorrupt (it is no torn tail: the log was closed after it) instead of dropping that write without a word; Salvage keeps everything before it
func TestFaultDamagedLastWALRecordIsReported(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	ids := writeSucceededRuns(t, dir, 10)
	wal := damageLastRecord(t, dir)

	_, err := Open(dir, Options{})
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(wal)) {
		t.Fatalf("open with a damaged last wal record: got %v, want ErrCorrupt naming %s", err, filepath.Base(wal))
	}
	t.Logf("open: %v", err)
	s, rep, err := Salvage(dir, Options{})
	if err != nil {
		t.Fatalf("salvage: %v", err)
	}
	defer s.Close()
	if rep.WAL != filepath.Base(wal) || rep.Backup == "" {
		t.Fatalf("salvage report: %+v", rep)
	}
	for _, id := range ids[:len(ids)-1] {
		if r, err := s.GetRun(ctx, id); err != nil || r.State != Succeeded {
			t.Fatalf("run %s before the damage: %v %v", id, r, err)
		}
	}
	// The damaged write was the last run's move to succeeded: it is lost
	// (its run directory tells the daemon how it ended), the rest is whole.
	if r, err := s.GetRun(ctx, ids[len(ids)-1]); err != nil || r.State != Running {
		t.Fatalf("last run after salvage: %v %v, want running (its last write was the damaged one)", r, err)
	}
	if chk, err := s.Check(ctx); err != nil || !chk.OK() {
		t.Fatalf("check after salvage: %v %v", chk.Problems, err)
	}
}
