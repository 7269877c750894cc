package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// CheckReport is what Check found: how many records of each kind it read
// and every inconsistency, one line each.
type CheckReport struct {
	Plans      int      `json:"plans"`
	Runs       int      `json:"runs"`
	Events     int      `json:"events"`
	Indexes    int      `json:"index_entries"`
	SubmitKeys int      `json:"submit_keys"`
	Problems   []string `json:"problems,omitempty"`
}

// OK reports whether Check found nothing wrong.
func (c *CheckReport) OK() bool { return len(c.Problems) == 0 }

// maxProblems bounds the lines a report lists; the count is still exact.
const maxProblems = 50

func (c *CheckReport) problem(format string, a ...any) {
	if len(c.Problems) == maxProblems {
		c.Problems = append(c.Problems, "... (more problems not listed)")
	}
	if len(c.Problems) < maxProblems {
		c.Problems = append(c.Problems, fmt.Sprintf(format, a...))
	}
}

// storeScan is one pass over every key.
type storeScan struct {
	runs      map[string]*Run
	badKeys   [][]byte // records that do not decode, or keys of no table
	indexKeys map[string]bool
	staleKeys [][]byte // submit keys naming no run
}

// scanAll reads every key of the store, decoding each record, and checks
// the indexes and submit keys against the run records.
func scanAll(db pebble.Reader, rep *CheckReport) (*storeScan, error) {
	sc := &storeScan{runs: map[string]*Run{}, indexKeys: map[string]bool{}}
	it, err := db.NewIter(nil)
	if err != nil {
		return nil, err
	}
	submits := map[string]string{}
	for ok := it.First(); ok; ok = it.Next() {
		k, v := it.Key(), it.Value()
		key := string(k)
		bad := func(what string, err error) {
			rep.problem("%s %q does not decode: %v", what, printable(key), err)
			sc.badKeys = append(sc.badKeys, bytes.Clone(k))
		}
		switch {
		case key == schemaKey:
		case strings.HasPrefix(key, planPfx):
			rep.Plans++
			var p Plan
			if err := json.Unmarshal(v, &p); err != nil {
				bad("plan", err)
			}
		case strings.HasPrefix(key, runPfx):
			rep.Runs++
			var r Run
			if err := json.Unmarshal(v, &r); err != nil || r.ID != key[len(runPfx):] || !r.State.Valid() {
				if err == nil {
					err = fmt.Errorf("id %q, state %q", r.ID, r.State)
				}
				bad("run", err)
				continue
			}
			sc.runs[r.ID] = &r
		case strings.HasPrefix(key, eventPfx):
			rep.Events++
			var e Event
			if err := json.Unmarshal(v, &e); err != nil {
				bad("event", err)
			}
		case strings.HasPrefix(key, "x/"):
			rep.Indexes++
			sc.indexKeys[key] = true
		case strings.HasPrefix(key, metricPfx):
			if i := strings.IndexByte(key, 0); i < 0 {
				bad("metric series", fmt.Errorf("no run id"))
			} else if _, err := decodeSeries(key[i+1:], v); err != nil {
				bad("metric series", err)
			}
		case strings.HasPrefix(key, sweepPfx):
			var sw Sweep
			if err := json.Unmarshal(v, &sw); err != nil {
				bad("sweep", err)
			}
		case isRecordKey(key): // record.go
			if err := checkRecord(v); err != nil {
				bad("run record", err)
			}
		case strings.HasPrefix(key, submitPfx):
			rep.SubmitKeys++
			submits[key] = string(v)
		default:
			rep.problem("key %q belongs to no table", printable(key))
			sc.badKeys = append(sc.badKeys, bytes.Clone(k))
		}
	}
	if err := firstErr(it.Error(), it.Close()); err != nil {
		return nil, fmt.Errorf("store: check: %w", err)
	}
	want := map[string]string{}
	for _, r := range sc.runs {
		for _, k := range runIndexes(r) {
			want[string(k)] = r.ID
		}
	}
	for _, k := range sortedKeys(want) {
		if !sc.indexKeys[k] {
			rep.problem("run %s is missing its index entry %q", want[k], printable(k))
		}
	}
	for _, k := range sortedKeys(sc.indexKeys) {
		if _, ok := want[k]; !ok {
			rep.problem("index entry %q matches no run record", printable(k))
		}
	}
	for _, k := range sortedKeys(submits) {
		if sc.runs[submits[k]] == nil {
			rep.problem("submit key %q names run %s, which has no record", printable(k), submits[k])
			sc.staleKeys = append(sc.staleKeys, []byte(k))
		}
	}
	return sc, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// printable shows an index key's NUL and time bytes as escapes.
func printable(k string) string {
	return strings.TrimPrefix(strings.TrimSuffix(fmt.Sprintf("%q", k), `"`), `"`)
}

// Check reads every record of the store, decodes each, and checks that
// the indexes and submit keys agree with the run records.
func (s *Store) Check(ctx context.Context) (*CheckReport, error) {
	rep := &CheckReport{}
	err := s.reader(ctx, func(db *pebble.DB) error {
		_, err := scanAll(db, rep)
		return err
	})
	return rep, err
}

// RepairReport says what Repair changed.
type RepairReport struct {
	Found *CheckReport `json:"found"`
	// Removed counts records that did not decode and keys of no table
	// (a backup keeps them), and submit keys naming no run.
	Removed int `json:"removed"`
	// Indexes is the number of index entries written.
	Indexes int `json:"indexes"`
}

// Repair drops what does not decode and rebuilds every index from the run
// records. Take a backup first (BackupDir): dropped records are gone.
func (s *Store) Repair(ctx context.Context) (*RepairReport, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return s.repair()
}

func (s *Store) repair() (*RepairReport, error) {
	rep := &RepairReport{Found: &CheckReport{}}
	err := s.writer(context.Background(), true, func(db *pebble.DB, b *pebble.Batch) error {
		sc, err := scanAll(db, rep.Found)
		if err != nil {
			return err
		}
		for _, k := range append(sc.badKeys, sc.staleKeys...) {
			if err := b.Delete(k, nil); err != nil {
				return err
			}
			rep.Removed++
		}
		if err := b.DeleteRange([]byte("x/"), prefixEnd([]byte("x/")), nil); err != nil {
			return err
		}
		for _, r := range sc.runs {
			for _, k := range runIndexes(r) {
				if err := b.Set(k, nil, nil); err != nil {
					return err
				}
				rep.Indexes++
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: repair: %w", err)
	}
	return rep, nil
}

// RestoreRun writes a run whose record the store lost, rebuilt by the
// caller from what is on disk beside the store, with one event saying so.
// An existing record is left alone (ErrExists).
func (s *Store) RestoreRun(ctx context.Context, r *Run, note string) error {
	if r.Reason == "" {
		r.Reason = note
	}
	if err := s.CreateRun(ctx, r); err != nil {
		return err
	}
	_, err := s.AppendEvent(ctx, Event{RunID: r.ID, Type: EventNote, Message: note})
	return err
}
