package host

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// benchRepo is a git workspace with a committed script and an edit.
func benchRepo(b *testing.B) string {
	b.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	for _, args := range [][]string{{"init", "-q"}, {"remote", "add", "origin", "https://u:p@example.com/r.git"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "train.py"), []byte("print('hi')\n"), 0o644)
	for _, args := range [][]string{{"add", "."}, {"-c", "user.name=b", "-c", "user.email=b@b", "commit", "-q", "-m", "i"}} {
		if out, err := exec.Command("git", append([]string{"-C", dir}, args...)...).CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	os.WriteFile(filepath.Join(dir, "train.py"), []byte("print('edited')\n"), 0o644)
	return dir
}

func benchEngine(b *testing.B) *Engine {
	b.Helper()
	home := b.TempDir()
	st, err := store.Open(filepath.Join(home, "store"), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	e, err := New(Config{Home: home, Store: st, Sandboxes: map[string]sandbox.Sandbox{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close(); st.Close() })
	return e
}

// BenchmarkSubmitRecord is what the record adds to the submit path: the
// fast part (files under .git, the script's hash) and its unsynced store
// write, against nothing (--no-record).
func BenchmarkSubmitRecord(b *testing.B) {
	dir := benchRepo(b)
	e := benchEngine(b)
	ctx := context.Background()
	run := &store.Run{ID: "01benchrecord0000000000000", State: store.Succeeded}
	if err := e.cfg.Store.CreateRun(ctx, run); err != nil {
		b.Fatal(err)
	}
	spec := sandbox.Spec{Command: []string{"python3", "train.py", "--lr", "0.1"}, Workdir: dir, Env: os.Environ()}
	for _, noRecord := range []bool{false, true} {
		b.Run(fmt.Sprintf("no-record=%v", noRecord), func(b *testing.B) {
			req := api.RunRequest{Command: spec.Command, Workdir: dir, NoRecord: noRecord, Env: []string{"LR=0.1", "API_KEY=x"}}
			for b.Loop() {
				e.saveRecord(ctx, run.ID, e.takeRecord(req, spec, sandbox.Process))
			}
		})
	}
}

// BenchmarkRecordSize reports the size of a complete record of a run of
// this machine's python3 in a git workspace with an edit (its packages are
// the bulk).
func BenchmarkRecordSize(b *testing.B) {
	if _, err := exec.LookPath("python3"); err != nil {
		b.Skip("python3 is not installed")
	}
	dir := benchRepo(b)
	spec := sandbox.Spec{Command: []string{"python3", "train.py"}, Workdir: dir, Env: os.Environ()}
	in := recordInput(spec, sandbox.Process)
	var size, pkgs int
	for b.Loop() {
		r := record.Fast(in, time.Now())
		recordCache.Complete(context.Background(), r, in)
		j, _ := json.Marshal(r)
		size = len(j)
		if r.Interpreter != nil {
			pkgs = len(r.Interpreter.Packages)
		}
	}
	b.ReportMetric(float64(size), "bytes/record")
	b.ReportMetric(float64(pkgs), "packages")
}

// BenchmarkCompare1000 compares 1 000 runs selected by a label (params
// from their records, last and best of a 200-step loss), a page of 50.
func BenchmarkCompare1000(b *testing.B) {
	e := benchEngine(b)
	ctx := context.Background()
	t0 := time.Now()
	for i := range 1000 {
		r := &store.Run{State: store.Succeeded, Labels: map[string]string{"exp": "x"}, CreatedAt: t0.Add(time.Duration(i) * time.Millisecond)}
		if err := e.cfg.Store.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		cmd := []string{"python3", "train.py", "--lr", fmt.Sprint(float64(i) / 1000), "--epochs", "3"}
		rec, _ := json.Marshal(&record.Record{Command: cmd, Params: record.Params(cmd)})
		if err := e.cfg.Store.PutRecord(ctx, r.ID, rec); err != nil {
			b.Fatal(err)
		}
		h := &store.MetricHistory{RunID: r.ID}
		for s := range int64(200) {
			h.Add("loss", s+1, t0, float64(i%97)+1/float64(s+1))
		}
		if err := e.cfg.Store.PutMetrics(ctx, h); err != nil {
			b.Fatal(err)
		}
	}
	q := CompareQuery{Labels: map[string]string{"exp": "x"}, CompareOptions: record.CompareOptions{Limit: 50}}
	for b.Loop() {
		c, err := e.Compare(ctx, q)
		if err != nil || c.Total != 1000 || len(c.Rows) != 50 {
			b.Fatalf("compare: %v %+v", err, c)
		}
	}
}
