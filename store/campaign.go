package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Campaign is what ties a run to others: its sweep and params, the runs
// it waits for, and the GPUs it asks for and holds.
type Campaign struct {
	Sweep  string            `json:"sweep,omitempty"`
	Index  int               `json:"index,omitempty"` // member number in its sweep, from 0
	Params map[string]string `json:"params,omitempty"`
	// After lists the runs this one starts after; AfterAny starts it
	// whichever way they end (else only when all succeeded).
	After    []string `json:"after,omitempty"`
	AfterAny bool     `json:"after_any,omitempty"`
	// GPUs is how many GPUs the run waits for (-1: all the daemon's);
	// Devices are those it was handed when it started.
	GPUs    int      `json:"gpus,omitempty"`
	Devices []string `json:"devices,omitempty"`
}

// Sweep is a grid of runs of one command, at most Parallel at once.
type Sweep struct {
	ID          string              `json:"id"`
	Name        string              `json:"name,omitempty"`
	Command     []string            `json:"command"`
	ParamNames  []string            `json:"param_names"`
	Sets        []map[string]string `json:"sets"` // one per member, in member order
	Parallel    int                 `json:"parallel,omitempty"`
	MaxFailures int                 `json:"max_failures,omitempty"`
	CreatedAt   time.Time           `json:"created_at"`
	// Stopped says why the sweep's unstarted members were cancelled
	// (sweep stop, max failures); empty while it goes on.
	Stopped string `json:"stopped,omitempty"`
	// Complete is set once every member is created: a daemon that dies
	// while submitting leaves the rest to the next one (host/sweep.go).
	Complete bool `json:"complete,omitempty"`
	// SubmitKey is the client's idempotency key: the same request sent
	// again (its daemon died before answering) finds this sweep.
	SubmitKey string `json:"submit_key,omitempty"`
}

// PutSweep stores sw, creating or replacing it, durably.
func (s *Store) PutSweep(ctx context.Context, sw *Sweep) error {
	if sw.ID == "" {
		sw.ID = NewID()
	}
	if err := validID("sweep", sw.ID); err != nil {
		return err
	}
	if sw.CreatedAt.IsZero() {
		sw.CreatedAt = time.Now().UTC()
	}
	v, err := json.Marshal(sw)
	if err != nil {
		return fmt.Errorf("store: encode sweep %s: %w", sw.ID, err)
	}
	return s.writer(ctx, true, func(_ *pebble.DB, b *pebble.Batch) error {
		return b.Set([]byte(sweepPfx+sw.ID), v, nil)
	})
}

// UpdateSweep applies fn to the stored sweep atomically and stores it.
func (s *Store) UpdateSweep(ctx context.Context, id string, fn func(*Sweep) error) (*Sweep, error) {
	var out *Sweep
	err := s.writer(ctx, true, func(db *pebble.DB, b *pebble.Batch) error {
		v, err := get(db, []byte(sweepPfx+id))
		if err != nil {
			return err
		}
		if v == nil {
			return notFound("sweep", id)
		}
		sw, err := decode[Sweep]("sweep", id, v)
		if err != nil {
			return err
		}
		if err := fn(sw); err != nil {
			return err
		}
		nv, err := json.Marshal(sw)
		if err != nil {
			return err
		}
		out = sw
		return b.Set([]byte(sweepPfx+id), nv, nil)
	})
	return out, err
}

// GetSweep returns the sweep with that id or unique id prefix.
func (s *Store) GetSweep(ctx context.Context, idOrPrefix string) (*Sweep, error) {
	var sw *Sweep
	err := s.reader(ctx, func(db *pebble.DB) error {
		id, v, err := resolve(db, sweepPfx, "sweep", idOrPrefix)
		if err != nil {
			return err
		}
		sw, err = decode[Sweep]("sweep", id, v)
		return err
	})
	return sw, err
}

// ListSweeps returns every sweep, newest first.
func (s *Store) ListSweeps(ctx context.Context) ([]*Sweep, error) {
	var out []*Sweep
	err := s.reader(ctx, func(db *pebble.DB) error {
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(sweepPfx), UpperBound: prefixEnd([]byte(sweepPfx))})
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.Last(); ok; ok = it.Prev() {
			sw, err := decode[Sweep]("sweep", string(it.Key()[len(sweepPfx):]), it.Value())
			if err != nil {
				return err
			}
			out = append(out, sw)
		}
		return it.Error()
	})
	return out, err
}

// IsNotFound reports whether err is a store not-found.
func IsNotFound(err error) bool { return errors.Is(err, ErrNotFound) }

// DeleteSweep removes a sweep record (one refused before any member was
// created).
func (s *Store) DeleteSweep(ctx context.Context, id string) error {
	return s.writer(ctx, true, func(_ *pebble.DB, b *pebble.Batch) error {
		return b.Delete([]byte(sweepPfx+id), nil)
	})
}
