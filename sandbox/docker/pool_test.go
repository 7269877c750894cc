package docker

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/runlog"
)

// poolEnv is a sandbox with a warm pool of size n.
func poolEnv(t *testing.T, n int) (env, string) {
	t.Helper()
	e := setup(t)
	o := testOptions(t)
	o.DefaultImage, o.PoolSize, o.PoolDir = e.image, n, t.TempDir()
	e.sb = New(o)
	t.Cleanup(func() { e.sb.Close() })
	return e, o.PoolDir
}

// warmCount is how many containers of any kind wait in sb's pool.
func warmCount(sb *Sandbox) int {
	sb.pool.mu.Lock()
	defer sb.pool.mu.Unlock()
	n := 0
	for _, k := range sb.pool.kinds {
		n += len(k.ready)
	}
	return n
}

// sharedSpec is a run whose kind (workspace included) the pool keys on.
func sharedSpec(e env, t *testing.T, ws string, cmd ...string) sandbox.Spec {
	spec := e.newSpec(t, cmd...)
	spec.Workdir = ws
	return spec
}

// TestPoolNeverReused: runs of one kind take warm containers, each a
// different one, and no container serves a second run: its init serves
// one run and exits, the container is removed, and its box is gone.
func TestPoolNeverReused(t *testing.T) {
	e, poolDir := poolEnv(t, 2)
	ws := t.TempDir()
	os.Chmod(ws, 0o777)
	ctx := context.Background()
	seen := map[string]bool{}
	pooled := 0
	for i := range 6 {
		if i > 0 {
			waitFor(t, "warm containers", func() bool { return warmCount(e.sb) > 0 })
		}
		spec := sharedSpec(e, t, ws, "sh", "-c", "cat /etc/hostname; echo $((40+2)) >> runs")
		h, err := e.sb.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		ex, err := h.Wait(ctx)
		if err != nil || ex.Code != 0 {
			t.Fatalf("run %d: %+v %v", i, ex, err)
		}
		host := strings.TrimSpace(string(streams(t, spec.LogPath)[runlog.Stdout]))
		if seen[host] || seen[h.Ref()] {
			t.Fatalf("run %d: container %s (%s) served a run before", i, h.Ref(), host)
		}
		seen[host], seen[h.Ref()] = true, true
		rs, _ := loadState(spec.StateDir)
		if r := rs.get(); r.Pooled {
			pooled++
			if err := supervisor.Release(r.Box); err == nil {
				t.Errorf("run %d: its pooled container's init still takes a run", i)
			}
			if _, err := os.Stat(r.Box); err == nil {
				t.Errorf("run %d: box %s left", i, r.Box)
			}
		}
		if _, err := e.cli.ContainerInspect(ctx, h.Ref()); err == nil {
			t.Errorf("run %d: container %s not removed", i, h.Ref())
		}
	}
	if pooled < 5 {
		t.Errorf("%d of 6 runs took a warm container, want 5 (all but the first)", pooled)
	}
	if b, _ := os.ReadFile(filepath.Join(ws, "runs")); strings.Count(string(b), "42\n") != 6 {
		t.Errorf("workspace: %q", b)
	}
	e.sb.Close()
	if ents, _ := os.ReadDir(poolDir); len(ents) != 0 {
		t.Errorf("pool dir after close: %d entries", len(ents))
	}
}

// TestPoolConcurrentClaims: runs started at once never share a container.
func TestPoolConcurrentClaims(t *testing.T) {
	e, _ := poolEnv(t, 3)
	ws := t.TempDir()
	ctx := context.Background()
	first := sharedSpec(e, t, ws, "true")
	if _, out := e.run(t, first); len(out) != 0 {
		t.Fatalf("first run printed %q", out)
	}
	waitFor(t, "3 warm containers", func() bool { return warmCount(e.sb) == 3 })
	var mu sync.Mutex
	refs := map[string]int{}
	var wg sync.WaitGroup
	for range 6 {
		spec := sharedSpec(e, t, ws, "true")
		wg.Go(func() {
			h, err := e.sb.Start(ctx, spec)
			if err != nil {
				t.Error(err)
				return
			}
			if ex, err := h.Wait(ctx); err != nil || ex.Code != 0 {
				t.Errorf("%+v %v", ex, err)
			}
			mu.Lock()
			refs[h.Ref()]++
			mu.Unlock()
		})
	}
	wg.Wait()
	for ref, n := range refs {
		if n > 1 {
			t.Errorf("container %s served %d runs", ref, n)
		}
	}
}

// TestPoolRunBehaves: a run in a warm container gets what a fresh one
// gets: env, stdin, setup, exit code, timeout, stop.
func TestPoolRunBehaves(t *testing.T) {
	e, _ := poolEnv(t, 1)
	ws := t.TempDir()
	ctx := context.Background()
	e.run(t, sharedSpec(e, t, ws, "true"))
	take := func(spec sandbox.Spec) sandbox.Handle {
		t.Helper()
		waitFor(t, "a warm container", func() bool { return warmCount(e.sb) > 0 })
		h, err := e.sb.Start(ctx, spec)
		if err != nil {
			t.Fatal(err)
		}
		if rs, _ := loadState(spec.StateDir); !rs.get().Pooled {
			t.Fatal("run did not take a warm container")
		}
		return h
	}
	spec := sharedSpec(e, t, ws, "sh", "-c", `read x; echo "$x $TOKEN"; exit 3`)
	spec.Env, spec.Stdin, spec.Setup = []string{"TOKEN=t0k"}, []byte("hello\n"), []string{"echo set up"}
	ex, _ := take(spec).Wait(ctx)
	out := streams(t, spec.LogPath)
	if ex.Code != 3 || string(out[runlog.Stdout]) != "hello t0k\n" || string(out[runlog.SetupStdout]) != "set up\n" {
		t.Errorf("exit %+v log %q", ex, out)
	}
	spec = sharedSpec(e, t, ws, "sleep", "30")
	spec.Timeout = time.Second
	if ex, _ := take(spec).Wait(ctx); !ex.TimedOut {
		t.Errorf("timeout: %+v", ex)
	}
	spec = sharedSpec(e, t, ws, "sleep", "30")
	h := take(spec)
	if err := h.Stop(ctx, time.Second); err != nil {
		t.Fatal(err)
	}
	if ex, _ := h.Wait(ctx); !ex.Cancelled || ex.Signal != "SIGTERM" {
		t.Errorf("stop: %+v", ex)
	}
}

// TestPoolSweep: a warm container no pool holds (its daemon died) is
// swept; one this process's pool holds is not.
func TestPoolSweep(t *testing.T) {
	e, _ := poolEnv(t, 1)
	ws := t.TempDir()
	ctx := context.Background()
	e.run(t, sharedSpec(e, t, ws, "true"))
	waitFor(t, "a warm container", func() bool { return warmCount(e.sb) > 0 })
	// Not this test's runs: only warm containers are in question here.
	none := func(string) bool { return true }
	if n, err := e.sb.Sweep(ctx, none); err != nil || n != 0 {
		t.Fatalf("sweep of a live pool: %d, %v", n, err)
	}
	o := testOptions(t)
	o.DefaultImage = e.image
	if n, err := New(o).Sweep(ctx, none); err != nil || n != 1 {
		t.Fatalf("sweep by another daemon of the same home: %d, %v; want the warm container", n, err)
	}
}
