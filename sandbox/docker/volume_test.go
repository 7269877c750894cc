package docker

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox/runlog"
)

// selfSum makes a container command print gen's output while hashing
// that very output inside the container (tee into a FIFO read by
// sha256sum), so the host compares the run log with what the command
// wrote, not with a guess of it.
func selfSum(gen string) string {
	return "mkfifo p; sha256sum < p > sum & " + gen + " | tee p; wait"
}

// streamSum hashes one stream of a run log without holding it in memory.
func streamSum(t *testing.T, path string, s runlog.Stream) (sum string, n int64) {
	t.Helper()
	h := sha256.New()
	err := runlog.ReadAll(path, func(r runlog.Record) error {
		if r.Stream == s {
			h.Write(r.Data)
			n += int64(len(r.Data))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	return hex.EncodeToString(h.Sum(nil)), n
}

// TestVolumeExact: every byte a container prints is in the run log, in
// order, whatever its shape and however much: the log driver that lost
// and repeated chunks at rotation and capped a run is out of the path.
func TestVolumeExact(t *testing.T) {
	e := setup(t)
	for _, tc := range []struct {
		name, gen string
		min       int64
	}{
		{"100MB-short-lines", "seq 1 12500000", 100_000_000},
		{"200MB-one-line", "head -c 200000000 /dev/zero | tr '\\0' a", 200_000_000},
		{"1GB-random", "head -c 1073741824 /dev/urandom", 1 << 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if testing.Short() && tc.min > 200_000_000 {
				t.Skip("1 GB: not in -short")
			}
			spec := e.newSpec(t, "sh", "-c", selfSum(tc.gen))
			defer os.Remove(spec.LogPath) // the disk is shared
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			h, err := e.sb.Start(ctx, spec)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := h.Wait(ctx)
			if err != nil || ex.Code != 0 || ex.Error != "" {
				t.Fatalf("exit %+v, %v", ex, err)
			}
			b, err := os.ReadFile(filepath.Join(spec.Workdir, "sum"))
			if err != nil {
				t.Fatal(err)
			}
			want, _, _ := strings.Cut(string(b), " ")
			got, n := streamSum(t, spec.LogPath, runlog.Stdout)
			if got != want || n < tc.min {
				t.Errorf("stdout: %d bytes, sha256 %s; the command printed sha256 %s", n, got, want)
			}
		})
	}
}

// TestStopWhilePrinting: stop ends a run that prints as fast as it can,
// within its grace: the container's init ends the tree and writes the
// record itself (no backstop kill by Docker), and the log is whole.
func TestStopWhilePrinting(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	spec := e.newSpec(t, "sh", "-c", "yes 0123456789abcdefghijklmnopqrstuvwxyz & yes ZYXWVUTSRQPONMLKJIHGFEDCBA >&2")
	defer os.Remove(spec.LogPath)
	h, err := e.sb.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "50 MB of output", func() bool { return logBytes(spec.LogPath, runlog.Stdout) > 50<<20 })
	const grace = 2 * time.Second
	begin := time.Now()
	if err := h.Stop(ctx, grace); err != nil {
		t.Fatal(err)
	}
	ex, _ := h.Wait(ctx)
	took := time.Since(begin)
	if !ex.Cancelled || ex.Error != "" || ex.Lost {
		t.Fatalf("exit %+v, want cancelled by the init", ex)
	}
	if took > grace+backstop {
		t.Errorf("stop took %v, past grace %v and the backstop", took, grace)
	}
	sum, err := runlog.Scan(spec.LogPath)
	st, serr := os.Stat(spec.LogPath)
	if err != nil || serr != nil || sum.ValidSize != st.Size() || sum.Bytes[runlog.Stderr] == 0 {
		t.Errorf("log after stop: %+v, %v %v", sum, err, serr)
	}
	if cs := e.containers(t, spec.RunID); len(cs) != 0 {
		t.Error("container left after stop")
	}
}

// Fault: fork bomb in a container -> bounded by the default pids limit, ended by its timeout, nothing left running
func TestFaultForkBombBoundedByDefaultPids(t *testing.T) {
	e := setup(t)
	o := testOptions(t)
	o.DefaultImage, o.DefaultPids = e.image, 64 // the default, made small: the machine is shared
	sb := New(o)
	defer sb.Close()
	ctx := context.Background()
	// The shell that starts the bomb forks once (b &) and then execs: had
	// it forked again (both sides of `b | b`, then sleep), the bomb could
	// fill the limit first under load, and busybox sh exits 2 on "can't
	// fork" before the timeout this test waits for.
	spec := e.newSpec(t, "sh", "-c", "echo bomb; b() { b | b & }; b & exec sleep 30")
	spec.Timeout, spec.Grace, spec.KeepContainer = 3*time.Second, time.Second, true
	h, err := sb.Start(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	peak := 0
	go func() {
		defer close(done)
		for {
			if st, err := h.Stats(ctx); err == nil {
				peak = max(peak, st.Pids)
			} else if strings.Contains(err.Error(), "run has ended") {
				return
			}
		}
	}()
	ex, _ := h.Wait(ctx)
	<-done
	if !ex.TimedOut || ex.Lost {
		t.Errorf("exit %+v, want timed out", ex)
	}
	// busybox sh says so when fork fails: the bomb met the limit.
	if out := streams(t, spec.LogPath); !strings.Contains(string(out[runlog.Stderr]), "can't fork") {
		t.Errorf("no fork failed: stderr %.200q", out[runlog.Stderr])
	}
	c, err := e.cli.ContainerInspect(ctx, h.Ref())
	if err != nil {
		t.Fatal(err)
	}
	if c.HostConfig.PidsLimit == nil || *c.HostConfig.PidsLimit != 64 {
		t.Fatalf("pids limit %v, want the default 64", c.HostConfig.PidsLimit)
	}
	if peak > 64 {
		t.Errorf("container reached %d processes, past its limit", peak)
	}
	if c.State.Running {
		t.Error("container still running after the run ended")
	}
}

// TestNoSecretsInInspect: env values reach the command but not the
// container's config, which docker inspect shows to anyone with access
// to the Docker daemon (item 8 of issue 11).
func TestNoSecretsInInspect(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", `echo "$API_TOKEN"`)
	spec.Env = []string{"API_TOKEN=s3cret-value"}
	spec.KeepContainer = true
	ex, out := e.run(t, spec)
	if ex.Code != 0 || string(out[runlog.Stdout]) != "s3cret-value\n" {
		t.Fatalf("exit %+v stdout %q", ex, out[runlog.Stdout])
	}
	c, err := e.cli.ContainerInspect(context.Background(), containerName(spec.RunID))
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range c.Config.Env {
		if strings.Contains(kv, "s3cret") {
			t.Errorf("docker inspect shows %q", kv)
		}
	}
	if b, err := os.ReadFile(filepath.Join(spec.StateDir, "box", "spec.json")); err == nil && len(b) > 0 {
		t.Error("the spec (with the env) is still on disk")
	}
}

// TestMissingCommandNamed: a command the image lacks is reported by its
// name, exit 127, as a shell would (Docker's own init named a file).
func TestMissingCommandNamed(t *testing.T) {
	e := setup(t)
	ex, out := e.run(t, e.newSpec(t, "no-such-tool", "--flag"))
	if ex.Code != 127 || !strings.Contains(string(out[runlog.Stderr]), "no-such-tool: command not found") {
		t.Errorf("exit %+v stderr %q", ex, out[runlog.Stderr])
	}
}
