//go:build linux

package store

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
)

// mountTmpfs mounts a tmpfs of the given size on a fresh directory. It
// skips when mounting is not permitted, unless RUNBOX_REQUIRE_TMPFS=1.
func mountTmpfs(t *testing.T, size string) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		msg := "cannot mount a tmpfs to fill (needs root or CAP_SYS_ADMIN): " + err.Error()
		if os.Getenv("RUNBOX_REQUIRE_TMPFS") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, syscall.MNT_DETACH) })
	return dir
}

// fill writes a filler file of n bytes (its blocks really allocated).
func fill(t *testing.T, path string, n int) {
	t.Helper()
	if err := os.WriteFile(path, make([]byte, n), 0o600); err != nil {
		t.Fatalf("filler: %v", err)
	}
}

// writeUntilFull creates runs and moves them to running until a write
// fails; it returns the acknowledged state of each run and the error.
func writeUntilFull(t *testing.T, s *Store) (map[string]State, error) {
	t.Helper()
	ctx := context.Background()
	acked := map[string]State{}
	label := strings.Repeat("l", 2048) // make each run take some room
	for i := 0; i < 100000; i++ {
		r := &Run{Labels: map[string]string{"pad": label}, Fingerprint: "full"}
		if err := s.CreateRun(ctx, r); err != nil {
			return acked, err
		}
		acked[r.ID] = r.State
		if _, err := s.Transition(ctx, r.ID, Running, "go", nil); err != nil {
			return acked, err
		}
		acked[r.ID] = Running
	}
	t.Fatal("the disk never filled up")
	return nil, nil
}

func checkAcked(t *testing.T, s *Store, acked map[string]State) {
	t.Helper()
	ctx := context.Background()
	for id, st := range acked {
		r, err := s.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("acknowledged run %s lost: %v", id, err)
		}
		if st == Running && r.State != Running {
			t.Fatalf("run %s is %s, but running was acknowledged", id, r.State)
		}
	}
}

func TestDiskFull(t *testing.T) {
	tests := []struct {
		name    string
		minFree int64
		off     bool
	}{
		// The reserve refuses writes before Pebble sees ENOSPC.
		{"reserve", 1 << 20, false},
		// No reserve: Pebble's WAL write fails with ENOSPC for real.
		{"enospc", -1, false},
		// No check at all: the WAL write itself fails and Pebble reports a
		// fatal commit error (or panics) inside the commit.
		{"wal", -1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mnt := mountTmpfs(t, "4m")
			dir := filepath.Join(mnt, "store")
			filler := filepath.Join(mnt, "filler")
			opts := Options{MemTableSize: 256 << 10, MinFreeBytes: tt.minFree}
			s, err := Open(dir, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			s.guard.off = tt.off
			free, _ := freeBytes(mnt)
			fill(t, filler, int(free)-(1<<20)-(600<<10))

			acked, err := writeUntilFull(t, s)
			if !errors.Is(err, ErrDiskFull) {
				t.Fatalf("got %v, want ErrDiskFull", err)
			}
			if !strings.HasPrefix(err.Error(), "store: disk full under "+dir+": ") {
				t.Fatalf("message: %v", err)
			}
			t.Logf("%d runs acknowledged, then: %v", len(acked), err)
			// Still refused, and reads still work.
			if err := s.CreateRun(context.Background(), &Run{}); !errors.Is(err, ErrDiskFull) {
				t.Fatalf("write on a full disk: %v", err)
			}
			checkAcked(t, s, acked)
			if !strings.Contains(err.Error(), "reopen the store") {
				// Space freed under a live store: writes resume once Pebble
				// can flush again, without a restart. (A WAL write that met
				// ENOSPC poisoned the DB, as the error says: only a reopen
				// brings it back. With no reserve that may come first.)
				if err := os.Remove(filler); err != nil {
					t.Fatal(err)
				}
				err := testwait.For("a write after space was freed", 30*time.Second, func() error {
					return s.CreateRun(context.Background(), &Run{})
				})
				if err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Close(); err != nil {
				t.Logf("close after disk full: %v", err)
			}

			if err := os.Remove(filler); err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			s2, err := Open(dir, opts)
			if err != nil {
				t.Fatalf("reopen after freeing space: %v", err)
			}
			defer s2.Close()
			checkAcked(t, s2, acked)
			if err := s2.CreateRun(context.Background(), &Run{}); err != nil {
				t.Fatalf("write after freeing space: %v", err)
			}
			runs, err := s2.ListRuns(context.Background(), Filter{States: []State{Running}})
			if err != nil || len(runs) < len(acked)-1 {
				t.Fatalf("index after reopen: %d running, %d acked (%v)", len(runs), len(acked), err)
			}
		})
	}
}
