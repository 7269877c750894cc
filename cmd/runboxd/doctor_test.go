package main

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
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/host/daemon/daemontest"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
)

// The doctor tests start real process runs: this test binary doubles as
// their supervisor.
func TestMain(m *testing.M) { supervisortest.Main(m) }

// serve runs a daemon on home until stop is called.
func serve(t *testing.T, home string) (*client.Client, func()) {
	t.Helper()
	d := daemontest.Start(t, daemontest.Options{Home: home})
	return d.Client, d.Stop
}

// overwriteWAL overwrites the middle third of what the store's newest WAL
// holds and returns its path.
func overwriteWAL(t *testing.T, home string) string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join(daemon.StoreDir(home), "*.log"))
	if len(logs) == 0 {
		t.Fatal("no wal")
	}
	sort.Strings(logs)
	p := logs[len(logs)-1]
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	end := len(bytes.TrimRight(b, "\x00"))
	from, to := end/3, 2*end/3
	copy(b[from:to], bytes.Repeat([]byte("garbage!"), (to-from)/8+1))
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// Fault: runbox doctor on a store whose WAL was overwritten in the middle -> verify says DAMAGED and changes nothing; --repair keeps a backup, salvages, corrects runs from their exit records; the daemon then shows every run's true end
func TestFaultDoctorRepairsDamagedStore(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	c, stop := serve(t, home)
	codes := map[string]int{}
	for i := range 12 {
		code := i % 3 // 0, 1, 2: succeeded and failed runs
		r, err := c.Submit(ctx, api.RunRequest{
			Command: []string{"sh", "-c", "echo run; exit " + string(rune('0'+code))},
			Sandbox: sandbox.Process, Workdir: t.TempDir(),
		})
		if err != nil {
			t.Fatal(err)
		}
		if end, err := c.Wait(ctx, r.ID, 30*time.Second); err != nil || end.Exit == nil || end.Exit.Code != code {
			t.Fatalf("run %d: %+v %v", i, end, err)
		}
		codes[r.ID] = code
	}
	if _, err := doctor(ctx, home, false); err == nil || !strings.Contains(err.Error(), "daemon") {
		t.Fatalf("doctor with a daemon up: got %v, want a refusal naming the daemon", err)
	}
	stop()
	wal := overwriteWAL(t, home)
	damaged, _ := os.ReadFile(wal)

	// Verify: says so, changes nothing.
	rep, err := doctor(ctx, home, false)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	printDoctor(&out, rep, false)
	t.Logf("doctor:\n%s", out.String())
	if rep.Healthy || rep.Damaged == "" || !strings.Contains(out.String(), "DAMAGED") || !strings.Contains(out.String(), "--repair") {
		t.Fatalf("doctor on a damaged store: %+v", rep)
	}
	if now, _ := os.ReadFile(wal); !bytes.Equal(now, damaged) {
		t.Fatal("doctor without --repair changed the wal")
	}

	// Repair: backup first, then salvage and correct the runs.
	rep, err = doctor(ctx, home, true)
	if err != nil {
		t.Fatal(err)
	}
	out.Reset()
	printDoctor(&out, rep, true)
	t.Logf("doctor --repair:\n%s", out.String())
	if !rep.Healthy || !rep.Repaired || rep.Salvage == nil || rep.Salvage.AfterDamage == 0 {
		t.Fatalf("doctor --repair: %+v", rep)
	}
	if kept, err := os.ReadFile(filepath.Join(rep.Backup, filepath.Base(wal))); err != nil || !bytes.Equal(kept, damaged) {
		t.Fatalf("backup %q does not hold the damaged wal as it was (%v)", rep.Backup, err)
	}
	if !strings.Contains(out.String(), "backup: ") {
		t.Errorf("doctor --repair does not say where the backup is")
	}
	if rep, err = doctor(ctx, home, false); err != nil || !rep.Healthy || len(rep.Runs) != 0 {
		t.Fatalf("doctor after repair: %+v %v", rep, err)
	}

	c, _ = serve(t, home)
	for id, code := range codes {
		want := api.Succeeded
		if code != 0 {
			want = api.Failed
		}
		got, err := c.Wait(ctx, id, 30*time.Second)
		if err != nil || got.State != want || got.Exit == nil || got.Exit.Code != code {
			t.Errorf("run %s after repair: %+v %v; want %s exit %d", id, got, err, want, code)
		}
	}
}
