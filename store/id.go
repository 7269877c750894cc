package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/oklog/ulid/v2"
)

// NewID returns a new run or plan id: a lowercase ULID, so ids sort by
// creation time and are easy to type.
func NewID() string {
	return strings.ToLower(ulid.Make().String())
}

// maxCandidates bounds the ids listed in an AmbiguousError.
const maxCandidates = 8

func validID(kind, id string) error {
	if id == "" || strings.ContainsAny(id, "\x00/") || len(id) > 128 {
		return fmt.Errorf("store: invalid %s id %q", kind, id)
	}
	return nil
}

// resolve finds the record whose id is idOrPrefix, or the only one that
// starts with it, and returns its id and value.
func resolve(db pebble.Reader, table, kind, idOrPrefix string) (string, []byte, error) {
	q := strings.ToLower(strings.TrimSpace(idOrPrefix))
	if q == "" || strings.ContainsRune(q, 0) {
		return "", nil, notFound(kind, idOrPrefix)
	}
	if v, err := get(db, []byte(table+q)); err != nil || v != nil {
		return q, v, err
	}
	if back, ok, err := parseLast(kind, q); ok {
		if err != nil {
			return "", nil, err
		}
		return newest(db, table, kind, q, back, func(k, v []byte) (string, []byte, error) {
			return string(k[len(table):]), append([]byte(nil), v...), nil
		})
	}
	pfx := []byte(table + q)
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
	if err != nil {
		return "", nil, err
	}
	defer it.Close()
	var ids []string
	var val []byte
	more := false
	for ok := it.First(); ok; ok = it.Next() {
		if len(ids) == maxCandidates {
			more = true
			break
		}
		ids = append(ids, string(it.Key()[len(table):]))
		if len(ids) == 1 {
			val = append([]byte(nil), it.Value()...)
		}
	}
	if err := it.Error(); err != nil {
		return "", nil, err
	}
	switch len(ids) {
	case 0:
		return "", nil, notFound(kind, idOrPrefix)
	case 1:
		return ids[0], val, nil
	}
	return "", nil, &AmbiguousError{Kind: kind, Prefix: idOrPrefix, Candidates: ids, More: more}
}

// newest walks the keys under pfx newest first (key order is creation
// order) and returns the record back places before the newest. at gives
// a key's id and record; an entry with no record (nil) does not count.
func newest(db pebble.Reader, pfx, kind, q string, back int, at func(key, value []byte) (string, []byte, error)) (string, []byte, error) {
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: []byte(pfx), UpperBound: prefixEnd([]byte(pfx))})
	if err != nil {
		return "", nil, err
	}
	defer it.Close()
	seen := 0
	for ok := it.Last(); ok; ok = it.Prev() {
		id, v, err := at(it.Key(), it.Value())
		switch {
		case err != nil:
			return "", nil, err
		case v == nil:
			continue
		case seen == back:
			return id, v, nil
		}
		seen++
	}
	if err := it.Error(); err != nil {
		return "", nil, err
	}
	if seen == 0 {
		return "", nil, fmt.Errorf("%s %q: there are no %ss yet: %w", kind, q, kind, ErrNotFound)
	}
	return "", nil, fmt.Errorf("%s %q: there are only %d %ss: %w", kind, q, seen, kind, ErrNotFound)
}

// get returns a copy of the value at key, or nil when there is none.
func get(r pebble.Reader, key []byte) ([]byte, error) {
	v, closer, err := r.Get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: get %q: %w", key, err)
	}
	defer closer.Close()
	return append([]byte(nil), v...), nil
}

func decode[T any](kind, id string, v []byte) (*T, error) {
	t := new(T)
	if err := json.Unmarshal(v, t); err != nil {
		return nil, fmt.Errorf("store: decode %s %s: %w", kind, id, err)
	}
	return t, nil
}
