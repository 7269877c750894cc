package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// order ranks the non-terminal states; a run only moves forward.
var order = map[State]int{Queued: 0, Preparing: 1, Smoke: 2, Running: 3}

// CanTransition reports whether a run may move from one state to another:
// forward through queued → preparing → smoke → running (steps may be
// skipped), or from any non-terminal state to any terminal one. Nothing
// leaves a terminal state, and no state moves to itself.
func CanTransition(from, to State) bool {
	if !from.Valid() || !to.Valid() || from.Terminal() || from == to {
		return false
	}
	return to.Terminal() || order[to] > order[from]
}

// CreateRun stores a new run and its first state event, durably. A run
// created in preparing (one the engine starts at once) records queued
// first, so every run's history begins at queued. Empty
// ID, CreatedAt, State, Attempt and Spec.RunID are filled in on r. The
// stored copy has secret env values redacted; r.Spec.Env is left as is so
// the caller can still start the run with it.
func (s *Store) CreateRun(ctx context.Context, r *Run) error {
	if r.ID == "" {
		r.ID = NewID()
	}
	if err := validID("run", r.ID); err != nil {
		return err
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now().UTC()
	}
	if r.State == "" {
		r.State = Queued
	}
	if !r.State.Valid() {
		return fmt.Errorf("store: run %s: unknown state %q", r.ID, r.State)
	}
	if r.Attempt == 0 {
		r.Attempt = 1
	}
	if r.Spec.RunID == "" {
		r.Spec.RunID = r.ID
	}
	return s.writer(ctx, true, func(db *pebble.DB, b *pebble.Batch) error {
		return s.stageRun(db, b, r)
	})
}

// stageRun adds the writes that create r to b: the record, its indexes,
// its submit key and its first events. It gives r its short id. Called
// with mu held.
func (s *Store) stageRun(db pebble.Reader, b *pebble.Batch, r *Run) error {
	old, err := get(db, runKey(r.ID))
	if err != nil {
		return err
	}
	if old != nil {
		return fmt.Errorf("run %q %w", r.ID, ErrExists)
	}
	if r.SubmitKey != "" {
		prev, err := get(db, submitKey(r.SubmitKey))
		if err != nil {
			return err
		}
		if prev != nil {
			return &DuplicateSubmitError{RunID: string(prev)}
		}
		if err := b.Set(submitKey(r.SubmitKey), []byte(r.ID), nil); err != nil {
			return err
		}
	}
	if err := s.claimShort(db, r); err != nil {
		return err
	}
	stored := *r
	stored.Spec.Env = RedactEnv(r.Spec.Env)
	v, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("store: encode run %s: %w", r.ID, err)
	}
	if err := b.Set(runKey(r.ID), v, nil); err != nil {
		return err
	}
	for _, k := range runIndexes(&stored) {
		if err := b.Set(k, nil, nil); err != nil {
			return err
		}
	}
	msg := r.Reason
	if msg == "" {
		msg = "created"
	}
	seq := uint64(1)
	if r.State == Preparing {
		// Started at once: the history still begins at queued.
		q := Event{RunID: r.ID, Seq: seq, Time: r.CreatedAt, Type: EventState, State: Queued, Message: "queued"}
		if err := putEvent(b, &q); err != nil {
			return err
		}
		seq++
	}
	ev := Event{RunID: r.ID, Seq: seq, Time: r.CreatedAt, Type: EventState, State: r.State, Message: msg}
	return putEvent(b, &ev)
}

// DuplicateSubmitError is CreateRun's answer for a submit key that already
// created a run: RunID is that run.
type DuplicateSubmitError struct{ RunID string }

func (e *DuplicateSubmitError) Error() string {
	return fmt.Sprintf("submission already created run %s", e.RunID)
}

// Is makes a duplicate submission an ErrExists.
func (e *DuplicateSubmitError) Is(target error) bool { return target == ErrExists }

// SubmittedRun returns the run a submission with this key created, or
// ErrNotFound.
func (s *Store) SubmittedRun(ctx context.Context, key string) (*Run, error) {
	var id []byte
	err := s.reader(ctx, func(db *pebble.DB) error {
		v, err := get(db, submitKey(key))
		id = v
		return err
	})
	if err != nil {
		return nil, err
	}
	if id == nil {
		return nil, fmt.Errorf("submission %q: %w", key, ErrNotFound)
	}
	return s.GetRun(ctx, string(id))
}

// GetRun returns the run with that id, short id, unique id prefix, or
// "@last" / "@last~N" (the newest run, the Nth before it).
func (s *Store) GetRun(ctx context.Context, idOrPrefix string) (*Run, error) {
	var r *Run
	err := s.reader(ctx, func(db *pebble.DB) error {
		id, v, err := resolveRun(db, idOrPrefix)
		if err != nil {
			return err
		}
		r, err = decode[Run]("run", id, v)
		return err
	})
	return r, err
}

// UpdateRun applies fn to the run with exactly this id, atomically with
// respect to every other write, and returns the stored result. Indexes
// follow the change. If fn changes State, the change must be legal (see
// CanTransition); a state event is appended in the same batch and the
// write is durable. Other updates (progress) are committed without fsync.
// If fn returns an error nothing is written.
func (s *Store) UpdateRun(ctx context.Context, id string, fn func(*Run) error) (*Run, error) {
	return s.update(ctx, id, "", true, fn)
}

// Transition moves a run to state to with a one-line reason, applying
// mutate (which may be nil) in the same write. It sets StartedAt on
// entering running and EndedAt on entering a terminal state when they are
// unset. An illegal move returns an error matching ErrInvalidTransition.
func (s *Store) Transition(ctx context.Context, id string, to State, reason string, mutate func(*Run)) (*Run, error) {
	return s.transition(ctx, id, to, reason, true, mutate)
}

// TransitionUnsynced is Transition without waiting for the disk: the
// write is lost if the daemon is killed or the machine loses power before
// the next synced write (or Sync) makes it durable — Pebble keeps an
// unsynced write in its own buffer, not the kernel's, so even kill -9
// drops it. Use it only where recovery copes with finding the previous
// state, as it does for preparing → running: a run found in preparing is
// looked for like a running one, and its start time is taken from its
// sandbox's records.
func (s *Store) TransitionUnsynced(ctx context.Context, id string, to State, reason string, mutate func(*Run)) (*Run, error) {
	return s.transition(ctx, id, to, reason, false, mutate)
}

func (s *Store) transition(ctx context.Context, id string, to State, reason string, sync bool, mutate func(*Run)) (*Run, error) {
	return s.update(ctx, id, reason, sync, func(r *Run) error {
		if !CanTransition(r.State, to) {
			return fmt.Errorf("run %s: cannot go from %s to %s: %w", r.ID, r.State, to, ErrInvalidTransition)
		}
		now := time.Now().UTC()
		r.State, r.Reason = to, reason
		if to == Running && r.StartedAt == nil {
			r.StartedAt = &now
		}
		if to.Terminal() && r.EndedAt == nil {
			r.EndedAt = &now
		}
		if mutate != nil {
			mutate(r)
		}
		return nil
	})
}

func (s *Store) update(ctx context.Context, id, reason string, sync bool, fn func(*Run) error) (*Run, error) {
	var out *Run
	err := s.write(ctx, func(db *pebble.DB, b *pebble.Batch) (bool, error) {
		var changed bool
		var err error
		out, changed, err = updateRun(db, b, id, reason, fn)
		return changed && sync, err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// updateRun stages the update in b and reports whether the state changed.
func updateRun(db *pebble.DB, b *pebble.Batch, id, reason string, fn func(*Run) error) (*Run, bool, error) {
	v, err := get(db, runKey(id))
	if err != nil {
		return nil, false, err
	}
	if v == nil {
		return nil, false, notFound("run", id)
	}
	old, err := decode[Run]("run", id, v)
	if err != nil {
		return nil, false, err
	}
	cur, err := decode[Run]("run", id, v) // a deep copy for fn
	if err != nil {
		return nil, false, err
	}
	if err := fn(cur); err != nil {
		return nil, false, err
	}
	if cur.ID != old.ID || cur.Short != old.Short {
		return nil, false, fmt.Errorf("store: run %s: an update may not change the id", id)
	}
	changed := cur.State != old.State
	if changed && !CanTransition(old.State, cur.State) {
		return nil, false, fmt.Errorf("run %s: cannot go from %s to %s: %w", id, old.State, cur.State, ErrInvalidTransition)
	}
	cur.Spec.Env = RedactEnv(cur.Spec.Env)
	if err := putRun(b, old, cur); err != nil {
		return nil, false, err
	}
	if changed {
		if reason == "" {
			reason = cur.Reason
		}
		ev := Event{RunID: id, Time: time.Now().UTC(), Type: EventState, State: cur.State, Message: reason}
		if err := appendEvent(db, b, &ev); err != nil {
			return nil, false, err
		}
	}
	return cur, changed, nil
}

// putRun writes cur over old and moves its index entries.
func putRun(b *pebble.Batch, old, cur *Run) error {
	v, err := json.Marshal(cur)
	if err != nil {
		return fmt.Errorf("store: encode run %s: %w", cur.ID, err)
	}
	if err := b.Set(runKey(cur.ID), v, nil); err != nil {
		return err
	}
	oldKeys, newKeys := runIndexes(old), runIndexes(cur)
	for _, k := range oldKeys {
		if !containsKey(newKeys, k) {
			if err := b.Delete(k, nil); err != nil {
				return err
			}
		}
	}
	for _, k := range newKeys {
		if !containsKey(oldKeys, k) {
			if err := b.Set(k, nil, nil); err != nil {
				return err
			}
		}
	}
	return nil
}

func containsKey(keys [][]byte, k []byte) bool {
	for _, x := range keys {
		if bytes.Equal(x, k) {
			return true
		}
	}
	return false
}

// Sync makes every write committed so far durable, as the next synced
// write would: for a caller that wrote without syncing and then has
// nothing to write for a while.
func (s *Store) Sync(ctx context.Context) error {
	return s.writer(ctx, true, func(_ *pebble.DB, b *pebble.Batch) error {
		// A log-only record: it reaches the WAL, and through it the
		// fsync, but changes nothing.
		return b.LogData(nil, nil)
	})
}
