package store

import (
	"bytes"
	"context"
	"slices"

	"github.com/cockroachdb/pebble/v2"
)

// ListRuns returns the runs that match f, newest first. It walks the most
// selective index (parent, then plan, then state, else creation time)
// between f.Since and f.Before, so it never scans runs outside them.
func (s *Store) ListRuns(ctx context.Context, f Filter) ([]*Run, error) {
	var out []*Run
	err := s.reader(ctx, func(db *pebble.DB) error {
		// One snapshot for every bucket, so a run that changes state
		// while we walk is seen once.
		snap := db.NewSnapshot()
		defer snap.Close()
		var err error
		out, err = listRuns(ctx, snap, f)
		return err
	})
	return out, err
}

// ActiveRuns returns the runs that have not reached a terminal state.
func (s *Store) ActiveRuns(ctx context.Context) ([]*Run, error) {
	var states []State
	for _, st := range States {
		if !st.Terminal() {
			states = append(states, st)
		}
	}
	return s.ListRuns(ctx, Filter{States: states})
}

// Children returns the runs whose ParentID is parentID (its retries),
// newest first.
func (s *Store) Children(ctx context.Context, parentID string) ([]*Run, error) {
	return s.ListRuns(ctx, Filter{ParentID: parentID})
}

// buckets picks the index buckets to walk for f.
func buckets(f Filter) [][]byte {
	switch {
	case f.ParentID != "":
		return [][]byte{indexPrefix(idxParent, f.ParentID)}
	case f.PlanID != "":
		return [][]byte{indexPrefix(idxPlan, f.PlanID)}
	case f.Sweep != "":
		return [][]byte{indexPrefix(idxSweep, f.Sweep)}
	case len(f.States) > 0:
		var bs [][]byte
		for _, st := range f.States {
			b := indexPrefix(idxState, string(st))
			if !slices.ContainsFunc(bs, func(x []byte) bool { return bytes.Equal(x, b) }) {
				bs = append(bs, b)
			}
		}
		return bs
	}
	return [][]byte{indexPrefix(idxTime, "")}
}

// cursor walks one index bucket newest first.
type cursor struct {
	it     *pebble.Iterator
	prefix []byte
	valid  bool
}

// suffix is the created-time and id part of the current key: comparable
// across buckets.
func (c *cursor) suffix() []byte { return c.it.Key()[len(c.prefix):] }

func listRuns(ctx context.Context, db pebble.Reader, f Filter) ([]*Run, error) {
	var curs []*cursor
	defer func() {
		for _, c := range curs {
			_ = c.it.Close()
		}
	}()
	for _, p := range buckets(f) {
		lo, hi := p, prefixEnd(p)
		if !f.Since.IsZero() {
			lo = append(append([]byte(nil), p...), timeBytes(f.Since)...)
		}
		if !f.Before.IsZero() {
			hi = append(append([]byte(nil), p...), timeBytes(f.Before)...)
		}
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: lo, UpperBound: hi})
		if err != nil {
			return nil, err
		}
		c := &cursor{it: it, prefix: p}
		c.valid = it.Last()
		curs = append(curs, c)
	}
	var out []*Run
	for f.Limit <= 0 || len(out) < f.Limit {
		// Merge: take the newest entry among the buckets.
		var best *cursor
		for _, c := range curs {
			if c.valid && (best == nil || bytes.Compare(c.suffix(), best.suffix()) > 0) {
				best = c
			}
		}
		if best == nil {
			break
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := idFromIndexKey(best.prefix, best.it.Key())
		best.valid = best.it.Prev()
		v, err := get(db, runKey(id))
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue // index entry of a run being rewritten; the run decides
		}
		r, err := decode[Run]("run", id, v)
		if err != nil {
			return nil, err
		}
		if matches(r, f) {
			out = append(out, r)
		}
	}
	for _, c := range curs {
		if err := c.it.Error(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func matches(r *Run, f Filter) bool {
	switch {
	case len(f.States) > 0 && !slices.Contains(f.States, r.State),
		f.ParentID != "" && r.ParentID != f.ParentID,
		f.PlanID != "" && r.PlanID != f.PlanID,
		f.Sweep != "" && (r.Campaign == nil || r.Campaign.Sweep != f.Sweep),
		!f.Since.IsZero() && r.CreatedAt.Before(f.Since),
		!f.Before.IsZero() && !r.CreatedAt.Before(f.Before):
		return false
	}
	return true
}
