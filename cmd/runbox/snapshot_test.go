package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// The default --snapshot of campaigns (issue 26) and what a snapshot run's
// end does with its copy, through the real CLI and daemon. A gate file
// holds the only slot, so that the runs under test wait in the queue while
// the workspace is edited.

func (e *env) holdSlot(t *testing.T) (blocker, gate string) {
	t.Helper()
	gate = filepath.Join(t.TempDir(), "go")
	blocker = strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "while [ ! -e "+gate+" ]; do sleep 0.05; done"))
	return blocker, gate
}

func openGate(t *testing.T, gate string) {
	t.Helper()
	if err := os.WriteFile(gate, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A sweep whose script is edited while its members queue runs the
// submitted script in every member, by default; --no-snapshot runs the
// edit (which proves the edit landed before the members ran).
func TestSweepMembersRunTheSubmittedScript(t *testing.T) {
	e := newEnv(t, "RUNBOX_MAX_PARALLEL=1")
	e.gitWork(map[string]string{"job.sh": "echo version-1 $1\n"})
	blocker, gate := e.holdSlot(t)
	snap := strings.TrimSpace(e.must("sweep", "--param", "x=a,b,c", "--", "sh", "job.sh", "{x}"))
	plain := strings.TrimSpace(e.must("sweep", "--no-snapshot", "--param", "x=d,e", "--", "sh", "job.sh", "{x}"))
	e.write("job.sh", "echo version-2 $1\n")
	openGate(t, gate)
	e.must("wait", blocker)
	e.must("sweep", "wait", snap)
	e.must("sweep", "wait", plain)
	for id, want := range map[string]string{snap: "version-1", plain: "version-2"} {
		sw := e.sweep(id)
		if len(sw.Runs) != sw.Members || sw.Members == 0 {
			t.Fatalf("sweep %s: %d runs of %d members", id, len(sw.Runs), sw.Members)
		}
		for _, m := range sw.Runs {
			out := strings.TrimSpace(e.must("logs", m.ID))
			if out != want+" "+m.Params["x"] {
				t.Errorf("sweep %s member %s ran %q, want %q", id, m.ID, out, want+" "+m.Params["x"])
			}
			var r *api.Run
			waitFor(t, func() bool { r = e.getRun(m.ID); return r.Record != nil && r.Record.Complete })
			if hasSnap := r.Record != nil && r.Record.Snapshot != nil; hasSnap != (id == snap) {
				t.Errorf("sweep %s member %s: snapshot %v", id, m.ID, hasSnap)
			}
			// The record's code is what ran: the edit is in the --no-snapshot
			// members' record only (it was read from the workspace, after
			// the edit, for the snapshot members too).
			if c := r.Record.Code; c == nil || c.Dirty != (id == plain) || strings.Contains(c.Diff, "version-2") != (id == plain) || c.AtSnapshot != (id == snap) {
				t.Errorf("sweep %s (snapshot %v) member %s: recorded code %+v", id, id == snap, m.ID, c)
			}
		}
	}
}

// A run chained with --after runs the code as submitted though it is
// edited while the run waits for its dependency; with --no-snapshot, the
// edit.
func TestAfterRunRunsTheSubmittedScript(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": "echo version-1\n"})
	first, gate := e.holdSlot(t)
	chained := strings.TrimSpace(e.must("run", "-d", "--after", first, "--", "sh", "job.sh"))
	plain := strings.TrimSpace(e.must("run", "-d", "--after", first, "--no-snapshot", "--", "sh", "job.sh"))
	if r := e.getRun(chained); r.State != api.Queued {
		t.Fatalf("the chained run is %s, not waiting", r.State)
	}
	e.write("job.sh", "echo version-2\n")
	openGate(t, gate)
	e.must("wait", chained)
	e.must("wait", plain)
	if out := strings.TrimSpace(e.must("logs", chained)); out != "version-1" {
		t.Errorf("the chained run ran %q, want the code as submitted (version-1)", out)
	}
	if out := strings.TrimSpace(e.must("logs", plain)); out != "version-2" {
		t.Errorf("the --no-snapshot chained run ran %q, want the edit (version-2)", out)
	}
	if res := e.run("", "run", "--snapshot", "--no-snapshot", "--", "true"); res.code == 0 || !strings.Contains(res.stderr, "contradict") {
		t.Errorf("--snapshot --no-snapshot: exit %d %q", res.code, res.stderr)
	}
}

// A snapshot run's outputs land in the real workspace when it ends: a new
// file, and a changed file the user left alone. A file the user changed
// while the run ran is not overwritten: the copy is kept, and the record
// says which file and where. A run chained after it reads its output.
func TestSnapshotOutputsComeBack(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"job.sh": "", "log.txt": "old\n", "notes.txt": "mine\n"})
	e.write("job.sh", `while [ ! -e "$1" ]; do sleep 0.05; done
mkdir -p out && echo result > out/model.txt
echo appended >> log.txt
echo run >> notes.txt
`)
	gate := filepath.Join(t.TempDir(), "go")
	id := strings.TrimSpace(e.must("run", "-d", "--snapshot", "--", "sh", "job.sh", gate))
	reader := strings.TrimSpace(e.must("run", "-d", "--after", id, "--", "cat", "out/model.txt"))
	e.write("notes.txt", "mine, edited while the run ran\n")
	openGate(t, gate)
	e.must("wait", id)
	if b, err := os.ReadFile(filepath.Join(e.work, "out", "model.txt")); err != nil || string(b) != "result\n" {
		t.Fatalf("the run's new file in the workspace: %q %v", b, err)
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "log.txt")); string(b) != "old\nappended\n" {
		t.Errorf("the run's change to a file the user left: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(e.work, "notes.txt")); string(b) != "mine, edited while the run ran\n" {
		t.Errorf("the user's edit was overwritten: %q", b)
	}
	r := e.getRun(id)
	sn := r.Record.Snapshot
	if sn == nil || !slices.Equal(sn.Returned, []string{"log.txt", filepath.Join("out", "model.txt")}) {
		t.Fatalf("record's copied-back files: %+v", sn)
	}
	if len(sn.Skipped) != 1 || !strings.HasPrefix(sn.Skipped[0], "notes.txt (changed in the workspace") || sn.Kept != sn.Dir {
		t.Fatalf("record's skipped files: %q kept %q", sn.Skipped, sn.Kept)
	}
	if b, err := os.ReadFile(filepath.Join(sn.Kept, "notes.txt")); err != nil || string(b) != "mine\nrun\n" {
		t.Errorf("the kept copy's notes.txt: %q %v", b, err)
	}
	if out := e.must("status", id); !strings.Contains(out, "not copied back:") || !strings.Contains(out, sn.Kept) {
		t.Errorf("runbox status does not say what stayed in the copy:\n%s", out)
	}
	e.must("wait", reader)
	if out := strings.TrimSpace(e.must("logs", reader)); out != "result" {
		t.Errorf("the run chained after it read %q, want its output", out)
	}
}

// A sweep's members are apart: each runs in a copy of the workspace as
// submitted, and a file an earlier member copied back into the workspace
// is not linked into the next one's copy (it was: the second member read
// the first's results.txt and wrote through to the workspace's, the way a
// member resuming from checkpoint.pt would resume another's). Only the
// first copy-back of a file made since the submission lands; the next
// members' copies of it stay in their copy, named in their record.
func TestSweepMembersDoNotSeeEachOthersOutputs(t *testing.T) {
	e := newEnv(t)
	e.gitWork(map[string]string{"in.txt": "x\n"})
	id := strings.TrimSpace(e.must("sweep", "--param", "i=1,2,3", "--parallel", "1", "--",
		"sh", "-c", `echo "member {i} sees: $(cat results.txt 2>/dev/null)"; echo "result {i}" > results.txt`))
	e.must("sweep", "wait", id)
	sw := e.sweep(id)
	if len(sw.Runs) != 3 {
		t.Fatalf("sweep: %d runs", len(sw.Runs))
	}
	for _, m := range sw.Runs {
		if out, want := strings.TrimSpace(e.must("logs", m.ID)), "member "+m.Params["i"]+" sees:"; out != want {
			t.Errorf("member %s printed %q, want %q", m.Params["i"], out, want)
		}
	}
	if b, err := os.ReadFile(filepath.Join(e.work, "results.txt")); err != nil || string(b) != "result 1\n" {
		t.Errorf("the workspace's results.txt: %q %v, want the first member's, copied back", b, err)
	}
}

// compare --sweep lists exactly the sweep's members and the param that
// differs among them (not the one they share, nor another run's).
func TestCompareSweep(t *testing.T) {
	e := newEnv(t)
	e.must("run", "--", "sh", "-c", "echo not a member", "--lr", "9")
	id := strings.TrimSpace(e.must("sweep", "--param", "lr=1,2,3", "--param", "bs=8", "--", "sh", "-c", "echo $0", "{lr}"))
	e.must("sweep", "wait", id)
	var c api.Comparison
	if err := json.Unmarshal([]byte(e.must("compare", "--json", "--sweep", id[:8])), &c); err != nil {
		t.Fatal(err)
	}
	var got, lrs []string
	for _, r := range c.Rows {
		got = append(got, r.RunID)
		lrs = append(lrs, r.Params["lr"])
	}
	var want []string
	for _, m := range e.sweep(id).Runs {
		want = append(want, m.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	slices.Sort(lrs)
	if !slices.Equal(got, want) || len(want) != 3 {
		t.Fatalf("compare --sweep rows %v, want the members %v", got, want)
	}
	if !slices.Equal(c.Params, []string{"lr"}) || !slices.Equal(lrs, []string{"1", "2", "3"}) {
		t.Fatalf("compare --sweep params %v (lr %v), want only lr", c.Params, lrs)
	}
	if res := e.run("", "compare", "--sweep", "nosuchsweep"); res.code == 0 {
		t.Errorf("compare of an unknown sweep: exit 0")
	}
}
