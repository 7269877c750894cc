package store

import (
	"errors"
	"fmt"
	"strings"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound: no plan or run has that id (or id prefix).
	ErrNotFound = errors.New("not found")
	// ErrAmbiguous: an id prefix matches more than one record. The error is
	// an *AmbiguousError that lists the candidates.
	ErrAmbiguous = errors.New("ambiguous id prefix")
	// ErrExists: CreateRun or PutPlan was given an id that is taken.
	ErrExists = errors.New("already exists")
	// ErrInvalidTransition: the run cannot move from its state to the one asked.
	ErrInvalidTransition = errors.New("invalid state transition")
	// ErrClosed: the store has been closed.
	ErrClosed = errors.New("store: closed")
	// ErrDiskFull: a write was refused or failed because the disk under the
	// store is (nearly) full. Nothing acknowledged before it is lost.
	ErrDiskFull = errors.New("disk full")
	// ErrLocked: another process (or another Open in this one) holds the store.
	ErrLocked = errors.New("store is locked")
	// ErrCorrupt: the store's files are damaged (a *CorruptError says
	// where); Salvage recovers what can be read.
	ErrCorrupt = errors.New("store is damaged")
	// ErrSchemaTooNew: the store was written by a newer runbox.
	ErrSchemaTooNew = errors.New("store schema too new")
)

// AmbiguousError is returned when an id prefix matches several records.
type AmbiguousError struct {
	Kind       string   // "run" or "plan"
	Prefix     string   // what was asked for
	Candidates []string // matching ids, sorted; at most maxCandidates
	More       bool     // there were more matches than listed
}

func (e *AmbiguousError) Error() string {
	more := ""
	if e.More {
		more = ", ..."
	}
	return fmt.Sprintf("%s id %q is ambiguous: matches %s%s", e.Kind, e.Prefix, strings.Join(e.Candidates, ", "), more)
}

// Unwrap makes errors.Is(err, ErrAmbiguous) true.
func (e *AmbiguousError) Unwrap() error { return ErrAmbiguous }

func notFound(kind, id string) error {
	return fmt.Errorf("%s %q %w", kind, id, ErrNotFound)
}
