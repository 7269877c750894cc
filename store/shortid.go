package store

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/cockroachdb/pebble/v2"
)

// Short ids are what `runbox ls` shows and what people type: the store
// numbers runs 1, 2, 3, ... in the order it creates them. A number is
// unique because only the store hands them out, one at a time under the
// write mutex, and runs are never deleted, so a number is never reused.
// Eight digits last for 10^8 runs. A full id starts with "0" (a ULID for
// the next thousand years) and a short id never does, so neither can be
// mistaken for the other. docs/RATIONALE.md has the reasoning.
//
// The index x/sn/<n:8 big-endian><id> maps a number back to its run and,
// being sorted by n, gives the last number handed out.

// lastRef is the name of the newest run: "@last", "@last~1" the one
// before it, and so on.
const lastRef = "@last"

func shortKey(n uint64, id string) []byte {
	return append(binary.BigEndian.AppendUint64([]byte(idxShort), n), id...)
}

// parseShort reads a short id: decimal, no sign, no leading zero.
func parseShort(s string) (uint64, bool) {
	if s == "" || len(s) > 19 || s[0] < '1' || s[0] > '9' {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	return n, err == nil
}

// parseLast reads "@last" or "@last~N" (the name of a kind: run, sweep,
// plan) and returns N.
func parseLast(kind, q string) (int, bool, error) {
	rest, ok := strings.CutPrefix(q, lastRef)
	if !ok {
		return 0, false, nil
	}
	if rest == "" {
		return 0, true, nil
	}
	n, err := strconv.Atoi(strings.TrimPrefix(rest, "~"))
	if !strings.HasPrefix(rest, "~") || err != nil || n < 0 || strings.HasPrefix(rest, "~+") {
		return 0, true, fmt.Errorf("%s %q: write @last for the newest %s or @last~N for the Nth before it: %w", kind, q, kind, ErrNotFound)
	}
	return n, true, nil
}

// resolveRun finds a run by full id, @last[~N], short id or unique id
// prefix, in that order.
func resolveRun(db pebble.Reader, q string) (string, []byte, error) {
	q = strings.ToLower(strings.TrimSpace(q))
	if q != "" {
		if v, err := get(db, runKey(q)); err != nil || v != nil {
			return q, v, err
		}
	}
	if back, ok, err := parseLast("run", q); ok {
		if err != nil {
			return "", nil, err
		}
		return lastRun(db, q, back)
	}
	if n, ok := parseShort(q); ok {
		return runByShort(db, q, n)
	}
	return resolve(db, runPfx, "run", q)
}

// lastRun walks the creation-time index newest first and returns the
// run back places before the newest. An index entry without its record
// (a repair's business) is not a run, so it does not count.
func lastRun(db pebble.Reader, q string, back int) (string, []byte, error) {
	return newest(db, idxTime, "run", q, back, func(k, _ []byte) (string, []byte, error) {
		id := idFromIndexKey([]byte(idxTime), k)
		v, err := get(db, runKey(id))
		return id, v, err
	})
}

func runByShort(db pebble.Reader, q string, n uint64) (string, []byte, error) {
	pfx := shortKey(n, "")
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
	if err != nil {
		return "", nil, err
	}
	defer it.Close()
	var ids []string
	for ok := it.First(); ok; ok = it.Next() {
		ids = append(ids, string(it.Key()[len(pfx):]))
	}
	if err := it.Error(); err != nil {
		return "", nil, err
	}
	switch len(ids) {
	case 0:
		return "", nil, notFound("run", q)
	case 1:
		v, err := get(db, runKey(ids[0]))
		if err == nil && v == nil {
			err = notFound("run", q)
		}
		return ids[0], v, err
	}
	// Only a damaged store (two runs given one number) gets here.
	return "", nil, &AmbiguousError{Kind: "run", Prefix: q, Candidates: ids}
}

// lastShort is the highest short id handed out, 0 for none.
func lastShort(db pebble.Reader) (uint64, error) {
	pfx := []byte(idxShort)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
	if err != nil {
		return 0, err
	}
	defer it.Close()
	if !it.Last() {
		return 0, it.Error()
	}
	k := it.Key()
	if len(k) < len(pfx)+8 {
		return 0, fmt.Errorf("store: short id index key %q is too short", k)
	}
	return binary.BigEndian.Uint64(k[len(pfx):]), nil
}

// loadShorts sets the counter to the last number handed out. Called by
// Open.
func (s *Store) loadShorts() error {
	return s.reader(context.Background(), func(db *pebble.DB) error {
		s.mu.Lock()
		defer s.mu.Unlock()
		last, err := lastShort(db)
		s.short = last
		return err
	})
}

// upgradeShorts numbers the runs of a store written before short ids
// existed, oldest first so the numbers follow creation order, then
// records the new schema version. Called by Open on such a store. It
// commits a chunk of runs at a time; cut short, it goes on where it
// stopped on the next Open (numbered runs are skipped).
func (s *Store) upgradeShorts() error {
	ctx := context.Background()
	if err := s.loadShorts(); err != nil {
		return err
	}
	var ids []string
	err := s.reader(ctx, func(db *pebble.DB) error {
		pfx := []byte(idxTime)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
		if err != nil {
			return err
		}
		for ok := it.First(); ok; ok = it.Next() {
			ids = append(ids, idFromIndexKey(pfx, it.Key()))
		}
		return firstErr(it.Error(), it.Close())
	})
	if err != nil {
		return fmt.Errorf("store: number runs: %w", err)
	}
	const chunk = 1000
	for len(ids) > 0 {
		n := min(chunk, len(ids))
		if err := s.writer(ctx, true, func(db *pebble.DB, b *pebble.Batch) error {
			return s.numberRuns(db, b, ids[:n])
		}); err != nil {
			return fmt.Errorf("store: number runs: %w", err)
		}
		ids = ids[n:]
	}
	return s.writer(ctx, true, func(_ *pebble.DB, b *pebble.Batch) error {
		return b.Set([]byte(schemaKey), []byte(strconv.Itoa(SchemaVersion)), nil)
	})
}

// numberRuns gives a short id to each of these runs that has none.
func (s *Store) numberRuns(db *pebble.DB, b *pebble.Batch, ids []string) error {
	for _, id := range ids {
		v, err := get(db, runKey(id))
		if err != nil {
			return err
		}
		if v == nil {
			continue
		}
		var r Run
		if err := json.Unmarshal(v, &r); err != nil {
			return fmt.Errorf("decode run %s: %w", id, err)
		}
		if r.Short != "" {
			continue
		}
		old := r
		r.Short = s.nextShort()
		if err := putRun(b, &old, &r); err != nil {
			return err
		}
	}
	return nil
}

// nextShort hands out the next number. Called with mu held; a number
// whose write then fails is skipped, never handed out twice.
func (s *Store) nextShort() string {
	s.short++
	return strconv.FormatUint(s.short, 10)
}

// claimShort gives r a short id: the one it brings when that is free (a
// run restored from disk keeps its number), else the next one.
func (s *Store) claimShort(db pebble.Reader, r *Run) error {
	if r.Short != "" {
		n, ok := parseShort(r.Short)
		if ok {
			_, _, err := runByShort(db, r.Short, n)
			if errors.Is(err, ErrNotFound) {
				if n > s.short {
					s.short = n
				}
				return nil
			}
			if err != nil && !errors.Is(err, ErrAmbiguous) {
				return err
			}
		}
	}
	r.Short = s.nextShort()
	// The counter is loaded by Open and Salvage; should any other way
	// in leave it behind the index, the index wins: a number is never
	// given twice.
	if _, _, err := runByShort(db, r.Short, s.short); !errors.Is(err, ErrNotFound) {
		if err != nil && !errors.Is(err, ErrAmbiguous) {
			return err
		}
		last, err := lastShort(db)
		if err != nil {
			return err
		}
		s.short = max(s.short, last)
		r.Short = s.nextShort()
	}
	return nil
}
