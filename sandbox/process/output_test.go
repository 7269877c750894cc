package process_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/runlog"
)

// hog allocates (and touches) 512 MiB, then holds it.
const hog = "b = b'x' * (512 << 20); import time; time.sleep(60)"

func TestMemoryLimit(t *testing.T) {
	tests := []struct {
		name     string
		watchdog bool
		note     string
	}{
		{"cgroup", false, "enforced by cgroup"},
		{"watchdog", true, "exceeded (rss"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := newSpec(t, "python3", "-c", hog)
			spec.Limits.MemoryBytes = 64 << 20
			h := start(t, newSandbox(process.Options{ForceWatchdog: tt.watchdog}), spec)
			e := wait(t, h)
			meta := string(streams(t, spec.LogPath)[runlog.Meta])
			if !tt.watchdog && strings.Contains(meta, "enforced by rss watchdog") {
				t.Skipf("no writable memory cgroup here: %s", meta)
			}
			if !e.OOMKilled || e.Code != 137 || e.Signal != "SIGKILL" {
				t.Fatalf("exit %+v, want OOM-killed by SIGKILL\nmeta: %s", e, meta)
			}
			if !strings.Contains(meta, tt.note) {
				t.Fatalf("meta %q lacks %q", meta, tt.note)
			}
			if e.OOMChecked {
				t.Errorf("an OOM kill says no OOM kill was found: %+v", e)
			}
		})
	}
	// A SIGKILL the run sent itself, in a run with a memory cgroup: the
	// supervisor read the cgroup's OOM counter, found no kill, and says
	// so (the classifier then names KILLED, not OOM_KILLED). The run holds
	// 160 MiB of a 256 MiB limit, so its memory alone looks like an OOM.
	t.Run("SIGKILL without OOM", func(t *testing.T) {
		spec := newSpec(t, "python3", "-c", "import os; b = b'x' * (160 << 20); os.kill(os.getpid(), 9)")
		spec.Limits.MemoryBytes = 256 << 20
		e, st := run(t, spec)
		meta := string(st[runlog.Meta])
		if strings.Contains(meta, "enforced by rss watchdog") {
			t.Skipf("no writable memory cgroup here: %s", meta)
		}
		if e.Signal != "SIGKILL" || e.OOMKilled || !e.OOMChecked {
			t.Fatalf("exit %+v, want SIGKILL with OOMChecked and not OOMKilled\nmeta: %s", e, meta)
		}
	})
	t.Run("under the limit", func(t *testing.T) {
		spec := newSpec(t, "python3", "-c", "b = b'x' * (8 << 20)")
		spec.Limits.MemoryBytes = 256 << 20
		if e, _ := run(t, spec); e.Code != 0 || e.OOMKilled {
			t.Fatalf("exit %+v", e)
		}
	})
}

// TestLongLine checks a 50 MB line with no newline passes through whole
// while the supervisor's own peak RSS stays small.
func TestLongLine(t *testing.T) {
	const size = 50 << 20
	spec := shSpec(t, "head -c "+strconv.Itoa(size)+" /dev/zero | tr '\\0' a; while [ ! -e go ]; do sleep 0.01; done")
	h := start(t, newSandbox(process.Options{}), spec)
	waitFor(t, "50 MB in the log", func() bool {
		sum, err := runlog.Scan(spec.LogPath)
		return err == nil && sum.Bytes[runlog.Stdout] >= size
	})
	hwm := vmHWM(t, h.Ref())
	t.Logf("supervisor peak RSS after a 50 MB line: %d KiB", hwm>>10)
	if hwm > 40<<20 {
		t.Errorf("supervisor peak RSS %d MiB: the line was buffered", hwm>>20)
	}
	os.WriteFile(filepath.Join(spec.Workdir, "go"), nil, 0o600)
	if e := wait(t, h); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	out := streams(t, spec.LogPath)[runlog.Stdout]
	if len(out) != size || bytes.Count(out, []byte("a")) != size {
		t.Fatalf("stdout %d bytes, want %d of 'a'", len(out), size)
	}
}

func vmHWM(t *testing.T, pid string) uint64 {
	b, err := os.ReadFile("/proc/" + pid + "/status")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM")
	return 0
}

// TestGiBIntact pushes 1 GiB of random bytes through the log and compares
// its sha256 with the one the child computed over what it wrote.
func TestGiBIntact(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 1 GiB")
	}
	spec := newSpec(t, "python3", "-c", `
import hashlib, os, sys
h, out, blk = hashlib.sha256(), sys.stdout.buffer, os.urandom(1 << 20)
for i in range(1024):
    b = blk[i:] + blk[:i]
    h.update(b); out.write(b)
    if i % 256 == 0: sys.stderr.write("progress %d\n" % i); sys.stderr.flush()
out.flush()
open("sum", "w").write(h.hexdigest())
`)
	e := wait(t, start(t, newSandbox(process.Options{}), spec))
	if e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	h := sha256.New()
	var n, errLines int64
	err := runlog.ReadAll(spec.LogPath, func(r runlog.Record) error {
		switch r.Stream {
		case runlog.Stdout:
			h.Write(r.Data)
			n += int64(len(r.Data))
		case runlog.Stderr:
			errLines += int64(bytes.Count(r.Data, []byte("\n")))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(filepath.Join(spec.Workdir, "sum"))
	if got := hex.EncodeToString(h.Sum(nil)); got != string(want) || n != 1<<30 || errLines != 4 {
		t.Fatalf("log: %d bytes sha256 %s, %d stderr lines; child: sha256 %s", n, got, errLines, want)
	}
}
