package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Fix is one run whose record FromDisk corrected (or would correct) from
// what is on disk beside the store.
type Fix struct {
	RunID string `json:"run"`
	// From is the state the store had; "" when it had no record at all.
	From string `json:"from"`
	To   string `json:"to"`
	// Evidence says what on disk shows it.
	Evidence string `json:"evidence"`
}

func (f Fix) String() string {
	from := f.From
	if from == "" {
		from = "no record"
	}
	return fmt.Sprintf("run %s: %s -> %s (%s)", f.RunID, from, f.To, f.Evidence)
}

// FromDisk brings the store back in line with the run directories under
// home/runs after the store lost writes. A run's directory outlives any
// store damage: the supervisor's exit record (or its live pid) shows a run
// started, its queued spec that it did not. So a run the store shows as
// queued (or in its smoke run) whose sandbox left a trace is moved to
// running, and a run with no record at all gets one back (queued, from its
// queued spec, or running); the daemon's recovery then re-attaches to each
// running run, reads its exit record and records its real end, with the
// failure analysis a finished run gets. Without apply nothing is written.
// Runs in other states are the engine's to recover, as after any restart.
func FromDisk(ctx context.Context, home string, st *store.Store, sbs map[string]sandbox.Sandbox, apply bool) ([]Fix, error) {
	root := filepath.Join(home, "runs")
	ents, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("daemon: read %s: %w", root, err)
	}
	sort.Slice(ents, func(i, j int) bool { return ents[i].Name() < ents[j].Name() })
	var fixes []Fix
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		fix, err := fromDisk(ctx, filepath.Join(root, e.Name()), e.Name(), st, sbs, apply)
		if err != nil {
			return fixes, err
		}
		if fix != nil {
			fixes = append(fixes, *fix)
		}
	}
	return fixes, nil
}

func fromDisk(ctx context.Context, dir, id string, st *store.Store, sbs map[string]sandbox.Sandbox, apply bool) (*Fix, error) {
	run, err := st.GetRun(ctx, id)
	switch {
	case errors.Is(err, store.ErrNotFound), errors.Is(err, store.ErrAmbiguous):
		run = nil
	case err != nil:
		return nil, err
	case run.ID != id || !(run.State == store.Queued || run.State == store.Smoke):
		return nil, nil
	}
	pending, backend, perr := host.QueuedSpec(dir)
	hasPending := perr == nil
	name := backend
	switch {
	case run != nil:
		name = run.Sandbox
	case name == "":
		// A queued spec written before it named its backend, or none:
		// the one backend every daemon has.
		name = sandbox.Process
	}
	spec := sandbox.Spec{RunID: id, StateDir: filepath.Join(dir, "sandbox"), LogPath: filepath.Join(dir, "output.log")}
	if run != nil && run.Spec.StateDir != "" {
		spec = run.Spec
	} else if hasPending {
		spec = pending
	}
	evidence, started := trace(ctx, sbs[name], spec)
	fix := &Fix{RunID: id, Evidence: evidence}
	if run != nil {
		fix.From = string(run.State)
	}
	switch {
	case started:
		fix.To = string(store.Running)
	case run == nil && hasPending:
		fix.To, fix.Evidence = string(store.Queued), "its queued spec is on disk"
	default:
		return nil, nil // nothing on disk says more than the store does
	}
	if !apply {
		return fix, nil
	}
	note := "the store lost this run's history; " + fix.Evidence
	if run != nil {
		_, err = st.Transition(ctx, id, store.Running, "running ("+note+")", nil)
		return fix, err
	}
	r := &store.Run{ID: id, State: store.State(fix.To), Sandbox: name, Spec: spec, CreatedAt: idTime(id)}
	if r.State == store.Running {
		now := time.Now().UTC()
		r.StartedAt = &now
	}
	return fix, st.RestoreRun(ctx, r, "restored from "+dir+": "+note)
}

// trace asks the run's sandbox what it left on disk: started is true when
// the run got as far as its sandbox (an exit record, or a supervisor).
func trace(ctx context.Context, sb sandbox.Sandbox, spec sandbox.Spec) (evidence string, started bool) {
	if sb == nil || spec.StateDir == "" {
		return "", false
	}
	if _, err := os.Stat(spec.StateDir); err != nil {
		return "", false
	}
	h, err := sb.Recover(ctx, spec)
	if err != nil {
		return "", false
	}
	wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	exit, err := h.Wait(wctx)
	switch {
	case err != nil:
		return "its supervisor (pid " + h.Ref() + ") is still running", true
	case exit.Lost:
		return "its sandbox ended without an exit record", true
	case exit.Cancelled:
		return "its exit record says it was stopped", true
	case exit.TimedOut:
		return "its exit record says it timed out", true
	}
	return fmt.Sprintf("its exit record says exit %d", exit.Code), true
}

// idTime is when a run id was made (ids are ULIDs), else now.
func idTime(id string) time.Time {
	u, err := ulid.ParseStrict(strings.ToUpper(id))
	if err != nil {
		return time.Now().UTC()
	}
	return ulid.Time(u.Time()).UTC()
}
