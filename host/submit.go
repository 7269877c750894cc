package host

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/jsonfile"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Submit creates a run from req and queues it. The run is in the store
// (state queued) before Submit returns.
func (e *Engine) Submit(ctx context.Context, req api.RunRequest) (*store.Run, error) {
	return e.submit(ctx, req, nil, nil)
}

// submit is Submit, Retry with the run it retries, and a sweep's member
// with its sweep (base): a request is prepared (request.go), then
// persisted, then queued, each once.
func (e *Engine) submit(ctx context.Context, req api.RunRequest, retried *store.Run, base *store.Campaign) (*store.Run, error) {
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return nil, ErrClosed
	}
	if req.IdempotencyKey != "" {
		// The same submission sent again (its answer was lost) gets the
		// run it created, never a second one.
		if run, err := e.cfg.Store.SubmittedRun(ctx, req.IdempotencyKey); err == nil {
			return e.Get(ctx, run.ID)
		} else if !errors.Is(err, store.ErrNotFound) {
			return nil, err
		}
	}
	// The run's place in line is taken with its id (engine.go: admit), so
	// runs start in creation order; every return before the run is
	// created gives the place back.
	// A run with dependencies, GPUs or a sweep goes through the queue's
	// checks rather than a free slot (campaign.go).
	if req.Snapshot && req.NoSnapshot {
		return nil, badRequest("--snapshot and --no-snapshot contradict each other")
	}
	req.Snapshot = wantSnapshot(req, base) // record.go
	adm, err := e.admit(gated(req, base))
	if err != nil {
		return nil, err
	}
	admitted := false
	defer func() {
		if !admitted {
			e.abandon(adm)
			if req.Snapshot {
				e.removeSnapshot(adm.id)
			}
		}
	}()
	pr, err := e.prepare(ctx, req, retried, base, adm.id)
	if err != nil {
		return nil, err
	}
	camp, err := e.campaignOf(ctx, pr.verdict.GPUs, pr.req, base) // campaign.go
	if err != nil {
		return nil, err
	}
	run := pr.record(adm)
	run.Campaign = camp
	if pr.verdict.Refusal != "" {
		return nil, e.refuse(ctx, run, pr.verdict.Refusal)
	}
	p, err := e.pendingOf(pr)
	if err != nil {
		return nil, err
	}
	// A run that can start at once is created in preparing: one synced
	// write instead of two.
	r := adm.slot
	if r != nil {
		run.State, run.Reason = store.Preparing, "preparing"
	}
	if err := e.persist(ctx, run, p); err != nil {
		var dup *store.DuplicateSubmitError
		if errors.As(err, &dup) {
			return e.Get(ctx, dup.RunID)
		}
		return nil, err
	}
	admitted = true
	e.trackCampaign(run.ID, camp, false)
	if note := pr.verdict.Note; note != "" {
		if _, err := e.cfg.Store.AppendEvent(ctx, store.Event{RunID: run.ID, Time: e.cfg.Now(), Type: store.EventNote, Message: note}); err != nil {
			e.log.Warn("run: note", "run", run.ID, "err", err)
		}
	}
	e.saveRecord(ctx, run.ID, pr.rec)
	if r != nil {
		e.launch(r, p)
		return run, nil
	}
	e.ready(adm, p)
	return run, nil
}

// record is the run's record as it is first stored.
func (pr *prepared) record(adm *admission) *store.Run {
	req := pr.req
	run := &store.Run{
		ID:            adm.id,
		ParentID:      req.ParentRunID,
		Attempt:       1,
		State:         store.Queued,
		Sandbox:       pr.backend,
		SandboxReason: pr.reason,
		Spec:          storedSpec(pr.spec, req),
		Fingerprint:   Fingerprint(req.Command),
		SubmitKey:     req.IdempotencyKey,
		Name:          req.Name,
		Labels:        req.Labels,
		CreatedAt:     adm.created,
		Reason:        "queued",
	}
	if pr.plan != nil {
		run.PlanID = pr.plan.ID
	}
	if req.Snapshot {
		run.Spec.Workdir = req.Workdir // the workspace; the record names the copy that runs
	}
	if req.StallTimeout > 0 {
		if run.Labels == nil {
			run.Labels = map[string]string{}
		}
		run.Labels[labelStall] = time.Duration(req.StallTimeout).String()
	}
	if parent := pr.parent; parent != nil {
		run.ParentID = parent.ID
		run.Attempt = parent.Attempt + 1
		if run.PlanID == "" {
			run.PlanID = parent.PlanID
		}
	}
	return run
}

// pendingOf is what waits on disk for the run to start: its spec, and its
// smoke test's when asked for.
func (e *Engine) pendingOf(pr *prepared) (*pendingRun, error) {
	p := &pendingRun{spec: pr.spec, backend: pr.backend, snapshotFrom: pr.snapshotFrom}
	if !pr.req.Smoke {
		return p, nil
	}
	if pr.plan == nil || pr.plan.Result.Smoke == nil {
		return nil, badRequest("--smoke needs a plan with a smoke command (runbox plan found none)")
	}
	sm := e.smokeSpec(pr.spec)
	sm.Command = pr.plan.Result.Smoke.Command
	p.smoke = &sm
	return p, nil
}

// smokeSpec is spec with the places of the run's smoke run: its log and
// its sandbox's state.
func (e *Engine) smokeSpec(spec sandbox.Spec) sandbox.Spec {
	spec.LogPath = filepath.Join(e.runDir(spec.RunID), "smoke", "output.log")
	spec.StateDir = filepath.Join(e.runDir(spec.RunID), "smoke", "sandbox")
	return spec
}

// persist puts the run on disk. The spec waits there until the run has
// started, so that a daemon that dies first leaves the next one enough to
// start it. It is in place before the run's record is: a record without
// it would be a run the next daemon can neither start nor find (it used
// to be written while the store synced, and a daemon killed in between
// lost the run).
func (e *Engine) persist(ctx context.Context, run *store.Run, p *pendingRun) error {
	dir := e.runDir(run.ID)
	if err := savePending(dir, p); err != nil {
		return fmt.Errorf("keep the run's spec: %w", err)
	}
	if err := e.cfg.Store.CreateRun(ctx, run); err != nil {
		removeSecrets(dir)
		os.Remove(dir) // only if empty: an id is never reused
		return err
	}
	return nil
}

// refuse records a run that was refused before it started: a failed run
// whose history says why, so the refusal is on record, and an error for
// the caller that names it.
func (e *Engine) refuse(ctx context.Context, run *store.Run, why string) error {
	run.State, run.Reason = store.Failed, "refused: "+why
	now := e.cfg.Now()
	run.EndedAt = &now
	if err := e.cfg.Store.CreateRun(ctx, run); err != nil {
		return err
	}
	return badRequest("%s (run %s, refused)", why, run.ID)
}

// storedSpec is what the store keeps: the user's own env overrides (the
// store redacts secrets), not the whole inherited environment.
func storedSpec(s sandbox.Spec, req api.RunRequest) sandbox.Spec {
	s.Env = append([]string(nil), req.Env...)
	s.CleanEnv = req.CleanEnv
	s.EnvAllow = req.EnvAllow
	s.Stdin = nil
	return s
}

// A queued run's full spec (with the real environment) waits in a 0600 file
// in its run directory, so a daemon restart can still start it; the file is
// emptied as soon as the run starts. The store only ever sees redacted env.
const pendingFile = "pending.json"

type pendingJSON struct {
	Spec  sandbox.Spec  `json:"spec"`
	Smoke *sandbox.Spec `json:"smoke,omitempty"`
	// Backend is the run's sandbox, for a store that lost the run's
	// record (QueuedSpec): the spec alone does not say where it runs.
	Backend      string `json:"backend,omitempty"`
	SnapshotFrom string `json:"snapshot_from,omitempty"`
}

func savePending(dir string, p *pendingRun) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	// Written whole or not at all: a daemon killed mid-write must not
	// leave a torn spec that the next one cannot read.
	return jsonfile.Write(filepath.Join(dir, pendingFile), pendingJSON{Spec: p.spec, Smoke: p.smoke, Backend: p.backend, SnapshotFrom: p.snapshotFrom}, false)
}

// loadPending reads a queued run's spec: os.ErrNotExist once the run has
// started (removeSecrets emptied it).
func loadPending(dir string) (*pendingRun, error) {
	var pj pendingJSON
	if err := jsonfile.ReadHeld(filepath.Join(dir, pendingFile), &pj); err != nil {
		return nil, err
	}
	return &pendingRun{spec: pj.Spec, smoke: pj.Smoke, backend: pj.Backend, snapshotFrom: pj.SnapshotFrom}, nil
}

// QueuedSpec reads the spec that a run's directory (home/runs/ID) keeps
// until the run starts, and the backend it was admitted to ("" in a file
// older than that field): what a store that lost the run's record gets
// it back from. os.ErrNotExist once the run has started.
func QueuedSpec(dir string) (sandbox.Spec, string, error) {
	p, err := loadPending(dir)
	if err != nil {
		return sandbox.Spec{}, "", err
	}
	if len(p.spec.Command) == 0 {
		return sandbox.Spec{}, "", fmt.Errorf("%s holds no command", pendingFile)
	}
	return p.spec, p.backend, nil
}

// removeSecrets empties the queued spec once the run has started
// (jsonfile.Empty: emptied, not removed); empty, it says the run has
// started, as its absence did.
func removeSecrets(dir string) {
	jsonfile.Empty(filepath.Join(dir, pendingFile))
	_ = os.Remove(filepath.Join(dir, pendingFile+jsonfile.TmpSuffix))
}

// Fingerprint groups runs of the same job: the program and, for
// interpreters, the script — not the arguments.
func Fingerprint(cmd []string) string {
	if len(cmd) == 0 {
		return ""
	}
	parts := []string{filepath.Base(cmd[0])}
	for _, a := range cmd[1:] {
		if strings.HasPrefix(a, "-") {
			if a == "-m" || a == "-c" {
				parts = append(parts, a)
				continue
			}
			continue
		}
		parts = append(parts, a)
		break
	}
	return strings.Join(parts, " ")
}
