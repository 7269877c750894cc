package daemon

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
)

// damageLastWALRecord overwrites bytes of the last record in the store's
// newest WAL, just before the EOF trailer a clean close wrote after it.
func damageLastWALRecord(t *testing.T, home string) {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(StoreDir(home), "*.log"))
	if len(logs) == 0 {
		t.Fatal("the store has no wal")
	}
	sort.Strings(logs)
	p := logs[len(logs)-1]
	num, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".log"), 10, 32)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Pebble's EOF trailer: zero checksum and length, recyclable full
	// chunk, the next log's number.
	trailer := make([]byte, 11)
	trailer[6] = 5
	binary.LittleEndian.PutUint32(trailer[7:], uint32(num)+1)
	at := bytes.LastIndex(b, trailer)
	if at < 64 {
		t.Fatalf("%s has no EOF trailer", p)
	}
	copy(b[at-40:], "garbage!garbage!")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Fault: the store's last WAL record (a run's end) overwritten between two daemon runs -> the daemon reports the damage instead of repairing it silently, and the run keeps its true exit, started_at and ended_at (from its exit record), not the time the new daemon found it
func TestFaultDamagedLastWALRecordKeepsTrueTimes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c, stop := daemonAt(t, home)
	r, err := c.Submit(ctx, api.RunRequest{Command: []string{"sh", "-c", "sleep 0.3; exit 3"}, Sandbox: sandbox.Process, Workdir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	before, err := c.Wait(ctx, r.ID, 30*time.Second)
	if err != nil || before.State != api.Failed || before.StartedAt == nil || before.EndedAt == nil {
		t.Fatalf("run: %+v %v", before, err)
	}
	stop()
	damageLastWALRecord(t, home)
	time.Sleep(1100 * time.Millisecond) // a time taken now would show

	c, _ = daemonAt(t, home)
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Store == nil || !strings.Contains(h.Store.Message, "damaged") || !strings.Contains(h.Store.Message, "exit records") {
		t.Errorf("health after damage to the wal's last record says nothing about it: %+v", h.Store)
	} else {
		t.Logf("health: %s", h.Store.Message)
	}
	after, err := c.Wait(ctx, r.ID, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if after.State != before.State || after.Exit == nil || after.Exit.Code != 3 {
		t.Fatalf("after the damage: %s exit %+v, was %s exit 3", after.State, after.Exit, before.State)
	}
	if after.StartedAt == nil || !after.StartedAt.Equal(*before.StartedAt) {
		t.Errorf("started_at moved: %v, was %v", after.StartedAt, before.StartedAt)
	}
	if after.EndedAt == nil || !after.EndedAt.Equal(*before.EndedAt) {
		t.Errorf("ended_at moved: %v, was %v", after.EndedAt, before.EndedAt)
	}
}

// Fault: a third of the store's WAL overwritten between two daemon runs -> every run, including those whose records the damage took and that were rebuilt from their run directories, keeps the started_at and ended_at it had (its exit record's), not the time of the salvage
func TestFaultDamagedStoreWALKeepsTrueTimes(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c, stop := daemonAt(t, home)
	before := map[string]*api.Run{}
	for i := 0; i < 16; i++ {
		r, err := c.Submit(ctx, api.RunRequest{
			Command: []string{"sh", "-c", "echo step " + strings.Repeat("x", i) + "; sleep 0.05"},
			Sandbox: sandbox.Process, Workdir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		end, err := c.Wait(ctx, r.ID, 30*time.Second)
		if err != nil || end.StartedAt == nil || end.EndedAt == nil {
			t.Fatalf("run %d: %+v %v", i, end, err)
		}
		before[r.ID] = end
	}
	stop()
	damageWAL(t, home)
	time.Sleep(1100 * time.Millisecond) // a time taken now would show

	c, _ = daemonAt(t, home)
	moved := 0
	for id, b := range before {
		got, err := c.Wait(ctx, id, 30*time.Second)
		if err != nil {
			t.Fatalf("run %s after the damage: %v", id, err)
		}
		if got.StartedAt == nil || got.EndedAt == nil || !got.StartedAt.Equal(*b.StartedAt) || !got.EndedAt.Equal(*b.EndedAt) {
			moved++
			t.Errorf("run %s (%s): started %v ended %v, was started %s ended %s",
				id, got.Reason, got.StartedAt, got.EndedAt, b.StartedAt, b.EndedAt)
		}
	}
	if moved > 0 {
		t.Fatalf("%d of %d runs' times moved", moved, len(before))
	}
}
