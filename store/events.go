package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Event types.
const (
	EventState    = "state"
	EventProgress = "progress"
	EventNote     = "note"
	EventFailure  = "failure"
)

// AppendEvent adds e to its run's history and returns it with Seq (and
// Time, when zero) filled in. Progress events are committed without fsync;
// the others are durable.
func (s *Store) AppendEvent(ctx context.Context, e Event) (Event, error) {
	if e.Type == "" {
		return Event{}, fmt.Errorf("store: event for run %s has no type", e.RunID)
	}
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	err := s.writer(ctx, e.Type != EventProgress, func(db *pebble.DB, b *pebble.Batch) error {
		v, err := get(db, runKey(e.RunID))
		if err != nil {
			return err
		}
		if v == nil {
			return notFound("run", e.RunID)
		}
		return appendEvent(db, b, &e)
	})
	if err != nil {
		return Event{}, err
	}
	return e, nil
}

// appendEvent gives e the next seq of its run and stages it in b. The
// caller holds the write mutex, so the last committed seq is the last one.
func appendEvent(db *pebble.DB, b *pebble.Batch, e *Event) error {
	pfx := eventPrefix(e.RunID)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
	if err != nil {
		return err
	}
	e.Seq = 1
	if it.Last() && len(it.Key()) == len(pfx)+8 {
		e.Seq = binary.BigEndian.Uint64(it.Key()[len(pfx):]) + 1
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return err
	}
	return putEvent(b, e)
}

func putEvent(b *pebble.Batch, e *Event) error {
	v, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("store: encode event: %w", err)
	}
	return b.Set(eventKey(e.RunID, e.Seq), v, nil)
}

// Events returns up to limit events of a run with Seq > afterSeq, oldest
// first (limit 0 = all). An unknown run has no events.
func (s *Store) Events(ctx context.Context, runID string, afterSeq uint64, limit int) ([]Event, error) {
	var out []Event
	if afterSeq == math.MaxUint64 {
		return nil, nil
	}
	err := s.reader(ctx, func(db *pebble.DB) error {
		pfx := eventPrefix(runID)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: eventKey(runID, afterSeq+1), UpperBound: prefixEnd(pfx)})
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.First(); ok && (limit <= 0 || len(out) < limit); ok = it.Next() {
			var e Event
			if err := json.Unmarshal(it.Value(), &e); err != nil {
				return fmt.Errorf("store: decode event %x: %w", it.Key(), err)
			}
			out = append(out, e)
		}
		return it.Error()
	})
	return out, err
}

func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
