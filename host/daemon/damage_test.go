package daemon

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/sandbox"
)

// daemonAt runs a daemon on home until the returned stop is called.
func daemonAt(t *testing.T, home string) (*client.Client, func()) {
	t.Helper()
	d, stop := serveDaemon(t, home, nil)
	return d.c, stop
}

// damageWAL overwrites the middle third of what the store's newest WAL
// holds, as a failing disk or a stray write would.
func damageWAL(t *testing.T, home string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(StoreDir(home), "*.log"))
	if len(logs) == 0 {
		t.Fatal("the store has no wal")
	}
	sort.Strings(logs)
	p := logs[len(logs)-1]
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00")) // the rest is preallocated
	from, to := end/3, 2*end/3
	copy(b[from:to], bytes.Repeat([]byte("garbage!"), (to-from)/8+1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Logf("damaged %s bytes %d-%d of %d", filepath.Base(p), from, to, end)
	return p
}

// Fault: a third of the store's WAL overwritten between two daemon runs -> the daemon says the store was damaged (health and log), keeps a backup, and every run keeps its true end and exit code
func TestFaultDamagedStoreWAL(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c, stop := daemonAt(t, home)
	type want struct {
		state api.State
		code  int
	}
	runs := map[string]want{}
	for i := 0; i < 16; i++ {
		code := 0
		if i%4 == 3 {
			code = 3
		}
		r, err := c.Submit(ctx, api.RunRequest{
			Command: []string{"sh", "-c", "echo step " + strings.Repeat("x", i) + "; exit " + string(rune('0'+code))},
			Sandbox: sandbox.Process, Workdir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		end, err := c.Wait(ctx, r.ID, 30*time.Second)
		if err != nil || end.Exit == nil || end.Exit.Code != code {
			t.Fatalf("run %d: %+v %v", i, end, err)
		}
		runs[r.ID] = want{end.State, code}
	}
	stop()
	damageWAL(t, home)

	c, _ = daemonAt(t, home)
	h, err := c.Health(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if h.Store == nil || !strings.Contains(h.Store.Message, "damaged") || h.Store.Backup == "" {
		t.Fatalf("health after a damaged wal says nothing about it: %+v", h.Store)
	}
	t.Logf("health: %s", h.Store.Message)
	if _, err := os.Stat(h.Store.Backup); err != nil {
		t.Fatalf("backup: %v", err)
	}
	for id, w := range runs {
		got, err := c.Wait(ctx, id, 30*time.Second)
		if err != nil {
			t.Fatalf("run %s after the damage: %v", id, err)
		}
		if got.State != w.state || got.Exit == nil || got.Exit.Code != w.code {
			t.Errorf("run %s: %s exit %+v, was %s with exit %d", id, got.State, got.Exit, w.state, w.code)
		}
	}
	listed, err := c.List(ctx, nil)
	if err != nil || len(listed) != len(runs) {
		t.Errorf("list shows %d runs, want %d (%v)", len(listed), len(runs), err)
	}
}
