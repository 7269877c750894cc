package process_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
	"github.com/runbox/runbox/sandbox/process"
)

// A run frees no file of its state dir: its spec (which may hold secrets)
// is emptied once read, the exit record is written into the space
// reserved for it, the reserve's own file, and the tree record's rewrites
// take turns with its twin. Every freed file costs later file creations on ext4 without a
// journal (issue 23), so this is what keeps back-to-back runs from slowing
// down run after run.
func TestRunFreesNoStateFile(t *testing.T) {
	sb := newSandbox(process.Options{})
	defer sb.Close()
	spec := shSpec(t, "sleep 1")
	h := start(t, sb, spec)
	reserve := filepath.Join(spec.StateDir, "exit.json.tmp")
	var during os.FileInfo
	if err := testwait.For("the exit record's reserve", 10*time.Second, func() error {
		st, err := os.Stat(reserve)
		if err != nil {
			return err
		}
		during = st
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if during.Size() < 4096 {
		t.Fatalf("the reserve holds %d bytes", during.Size())
	}
	specPath := filepath.Join(spec.StateDir, "spec.json")
	taken, err := os.Stat(specPath)
	if err != nil {
		t.Fatalf("the spec once taken: %v", err)
	}
	if taken.Size() != 0 {
		t.Fatalf("the spec once taken holds %d bytes, want none", taken.Size())
	}
	tree, err := os.Stat(filepath.Join(spec.StateDir, "tree.json"))
	if err != nil {
		t.Fatal(err)
	}
	if e := wait(t, h); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	exit, err := os.Stat(filepath.Join(spec.StateDir, "exit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !os.SameFile(during, exit) {
		t.Fatal("the exit record is a new file, not the reserve's")
	}
	if exit.Size() >= during.Size() {
		t.Fatalf("the exit record is %d bytes: the reserve was not given back", exit.Size())
	}
	if !sameFile(t, spec.StateDir, "spec.json", taken) {
		t.Fatal("the spec's file was replaced or removed")
	}
	if _, err := os.Stat(filepath.Join(spec.StateDir, "exit.reserve")); !os.IsNotExist(err) {
		t.Fatalf("a separate reserve file: %v", err)
	}
	// The tree record was written before the command started and again
	// with its process group: the first file was kept as the twin (a
	// rename over it would have freed it), emptied.
	twin, err := os.Stat(filepath.Join(spec.StateDir, "tree.json.tmp"))
	if err != nil {
		t.Fatalf("the tree record's first file was freed: %v", err)
	}
	if twin.Size() != 0 || os.SameFile(twin, tree) && sameFile(t, spec.StateDir, "tree.json", twin) {
		t.Fatalf("twin %d bytes", twin.Size())
	}
}

func sameFile(t *testing.T, dir, name string, st os.FileInfo) bool {
	t.Helper()
	o, err := os.Stat(filepath.Join(dir, name))
	return err == nil && os.SameFile(o, st)
}
