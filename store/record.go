package store

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// A run's record of what ran (package record) is kept under its own table,
// apart from the run, so that the run record stays small for lists and the
// state machine, and the record can be completed after the start without
// touching the run:
//
//	c/<run id>   the record (JSON, written by the engine)
const recordPfx = "c/"

func recordKey(runID string) []byte { return []byte(recordPfx + runID) }

// isRecordKey tells check.go the table of a key.
func isRecordKey(key string) bool { return strings.HasPrefix(key, recordPfx) }

// checkRecord reports whether a stored record decodes.
func checkRecord(v []byte) error {
	var m map[string]any
	return json.Unmarshal(v, &m)
}

// PutRecord stores a run's record (JSON; the caller has redacted its
// secrets). Like metrics it is committed without fsync: a crash loses at
// most a record taken in the last moment, never a run.
func (s *Store) PutRecord(ctx context.Context, runID string, rec []byte) error {
	return s.writer(ctx, false, func(db *pebble.DB, b *pebble.Batch) error {
		v, err := get(db, runKey(runID))
		if err != nil {
			return err
		}
		if v == nil {
			return notFound("run", runID)
		}
		return b.Set(recordKey(runID), rec, nil)
	})
}

// Record returns a run's stored record, or nil when it has none.
func (s *Store) Record(ctx context.Context, runID string) ([]byte, error) {
	var out []byte
	err := s.reader(ctx, func(db *pebble.DB) error {
		v, err := get(db, recordKey(runID))
		out = v
		return err
	})
	return out, err
}

// LastSucceeded returns the newest run with this fingerprint that
// succeeded and was created before t, or nil: the newest that ran in
// workdir if one did, else the newest anywhere (the same script name in
// another project is a poorer match, not none). It looks at most at limit
// ended runs.
func (s *Store) LastSucceeded(ctx context.Context, fingerprint string, before time.Time, workdir string, limit int) (*Run, error) {
	var out *Run
	if fingerprint == "" {
		return nil, nil
	}
	err := s.reader(ctx, func(db *pebble.DB) error {
		runs, err := terminalRuns(ctx, db, fingerprint, limit)
		if err != nil {
			return err
		}
		for _, r := range runs {
			if r.State != Succeeded || !r.CreatedAt.Before(before) {
				continue
			}
			if out == nil {
				out = r
			}
			if r.Spec.Workdir == workdir {
				out = r
				return nil
			}
		}
		return nil
	})
	return out, err
}

// RecentEnded returns up to limit ended runs with this fingerprint,
// newest first (for the experience summary's "what the failures had").
func (s *Store) RecentEnded(ctx context.Context, fingerprint string, limit int) ([]*Run, error) {
	var out []*Run
	if fingerprint == "" {
		return nil, nil
	}
	err := s.reader(ctx, func(db *pebble.DB) error {
		var err error
		out, err = terminalRuns(ctx, db, fingerprint, limit)
		return err
	})
	return out, err
}

// The machine's series (sys/..., host/sysmetrics.go) are counted apart
// from the run's own: a run reporting MaxRunSeries metrics of its own
// keeps them all, and the machine keeps at most MaxSysSeries.
const (
	SysPrefix    = "sys/"
	MaxSysSeries = 8
)

// full reports whether a new series called name would be over its bound.
func (h *MetricHistory) full(name string) bool {
	sys := strings.HasPrefix(name, SysPrefix)
	n := 0
	for _, s := range h.Series {
		if strings.HasPrefix(s.Name, SysPrefix) == sys {
			n++
		}
	}
	if sys {
		return n >= MaxSysSeries
	}
	return n >= MaxRunSeries
}
