package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// A store that lost the records of queued runs gets each back from the
// spec its run directory keeps, on the backend that spec names: a Slurm
// run restored to the process backend would run on this machine, not the
// cluster. A spec from before it named its backend falls back to the
// process backend, the one every daemon has. The files are as the engine
// writes them (host.TestQueuedSpecNamesItsBackend reads one it wrote).
func TestFromDiskRestoresAQueuedRunToItsBackend(t *testing.T) {
	ctx := context.Background()
	home := t.TempDir()
	st, err := store.Open(StoreDir(home), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	runs := map[string]struct{ file, want string }{
		store.NewID(): {`{"spec":{"run_id":"x","command":["./train.sh"],"slurm":{"partition":"gpu"}},"backend":"slurm"}`, sandbox.Slurm},
		store.NewID(): {`{"spec":{"run_id":"x","command":["echo","old"]}}`, sandbox.Process},
	}
	for id, r := range runs {
		dir := filepath.Join(home, "runs", id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "pending.json"), []byte(r.file), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	sbs := map[string]sandbox.Sandbox{}
	fixes, err := FromDisk(ctx, home, st, sbs, true)
	if err != nil || len(fixes) != len(runs) {
		t.Fatalf("FromDisk: %v %v, want %d fixes", fixes, err, len(runs))
	}
	for id, r := range runs {
		got, err := st.GetRun(ctx, id)
		if err != nil {
			t.Fatalf("run %s not restored: %v", id, err)
		}
		if got.State != store.Queued || got.Sandbox != r.want {
			t.Errorf("run %s restored %s on %q, want queued on %q", id, got.State, got.Sandbox, r.want)
		}
	}
}
