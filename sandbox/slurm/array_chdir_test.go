package slurm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// A job array's members each run in their own directory, and a member's
// directory is gone once it ends (a sweep member's snapshot): with %1,
// member 1 starts after member 0's directory was removed and still runs
// cleanly in its own, with no "couldn't chdir" from slurmstepd in its
// log and its own exit code (the array once took --chdir from member 0).
func TestArrayMemberRunsInItsOwnDirAfterMember0sIsGone(t *testing.T) {
	sb := needSlurm(t)
	key := fmt.Sprintf("cd%d", time.Now().UnixNano())
	arrDir := filepath.Join(t.TempDir(), "array")
	var specs []sandbox.Spec
	for i := range 2 {
		s := testSpec(t, `pwd; test "$RUNBOX_PARAM_I" = 0 || exit 7`)
		s.RunID = fmt.Sprintf("%s-%d", key, i)
		s.Env = append(s.Env, fmt.Sprintf("RUNBOX_PARAM_I=%d", i))
		s.Slurm = &sandbox.SlurmSpec{Array: &sandbox.Group{Key: key, Dir: arrDir, Index: i, Size: 2, Parallel: 1}}
		specs = append(specs, s)
	}
	hs := startAll(t, sb, specs)
	if e := wait(t, hs[0], 90*time.Second); e.Code != 0 || e.Error != "" {
		t.Fatalf("member 0: exit %+v", e)
	}
	// Member 0 ended: its directory goes, as a member's snapshot does.
	if err := os.RemoveAll(specs[0].Workdir); err != nil {
		t.Fatal(err)
	}
	e := wait(t, hs[1], 90*time.Second)
	if e.Code != 7 || e.Cancelled || e.Error != "" {
		t.Errorf("member 1: exit %+v, want code 7", e)
	}
	got := streams(t, specs[1].LogPath)
	if strings.Contains(got[runlog.Stderr], "chdir") {
		t.Errorf("member 1's log has a chdir error: %q", got[runlog.Stderr])
	}
	if out := strings.TrimSpace(got[runlog.Stdout]); out != specs[1].Workdir {
		t.Errorf("member 1 ran in %q, want its own directory %q", out, specs[1].Workdir)
	}
}
