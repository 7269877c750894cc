// Package store keeps runbox's plans, runs, events and indexes in an
// embedded Pebble database. One process (the daemon) opens a store at a
// time; within it a Store is safe for concurrent use.
//
// Every write that changes a run's state is committed with pebble.Sync, so a
// transition that returned nil survives a crash. Writes are refused with
// ErrDiskFull before the disk is completely full (see Options.MinFreeBytes),
// because Pebble treats a failed WAL write as fatal; diskfull.go explains.
package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// SchemaVersion is the layout this build writes. A store written by a newer
// build is refused rather than misread. 2: every run has a short id
// (shortid.go); a version 1 store is upgraded on Open.
const SchemaVersion = 2

// Options tune a Store. The zero value is what the daemon wants.
type Options struct {
	// Logger receives Pebble's own log lines. Nil silences them.
	Logger *slog.Logger
	// CacheSize is Pebble's block cache in bytes (default 4 MiB).
	CacheSize int64
	// MemTableSize is Pebble's memtable size in bytes (default 1 MiB). The
	// WAL is preallocated to 110% of it.
	MemTableSize uint64
	// MinFreeBytes is the free space the filesystem must keep: a write that
	// finds less is refused with ErrDiskFull before Pebble sees ENOSPC.
	// Zero means 4×MemTableSize + 1 MiB; negative disables the check.
	MinFreeBytes int64
}

func (o Options) withDefaults() Options {
	if o.CacheSize <= 0 {
		o.CacheSize = 4 << 20
	}
	if o.MemTableSize == 0 {
		o.MemTableSize = 1 << 20
	}
	if o.MinFreeBytes == 0 {
		o.MinFreeBytes = 4*int64(o.MemTableSize) + 1<<20
	}
	return o
}

// Store is an open runbox store.
type Store struct {
	dir  string
	opts Options

	// life guards db: readers and writers hold it shared, Close exclusively.
	life  sync.RWMutex
	db    *pebble.DB
	lock  *pebble.Lock
	cache *pebble.Cache
	fence *fenceFS

	// mu serialises writes so read-modify-write cycles are atomic.
	mu sync.Mutex
	// broken is set once Pebble failed a write; every later write returns
	// it. Guarded by mu.
	broken error

	guard diskGuard

	// short is the last short id handed out. Guarded by mu.
	short uint64
}

// Open opens (creating if needed) the store in dir.
func Open(dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("store: create %s: %w", dir, err)
	}
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		return nil, lockError(dir, err)
	}
	// Before Pebble replays (and then deletes) the WALs: it would drop
	// every write after a damaged chunk without a word (see wal.go).
	if _, bad, err := checkWALs(dir); err != nil || bad != nil {
		_ = lock.Close()
		if err != nil {
			return nil, err
		}
		return nil, walCorrupt(dir, bad)
	}
	s := &Store{dir: dir, opts: opts, lock: lock}
	s.guard.init(dir, opts)
	if err := s.openDB(); err != nil {
		_ = lock.Close()
		return nil, err
	}
	if err := s.checkSchema(); err != nil {
		_ = s.Close()
		return nil, err
	}
	if err := s.loadShorts(); err != nil {
		_ = s.Close()
		return nil, err
	}
	return s, nil
}

func lockError(dir string, err error) error {
	return fmt.Errorf("store: %s is in use by another process (is a runbox daemon already running?): %w: %w", dir, ErrLocked, err)
}

func (s *Store) openDB() (err error) {
	s.cache = pebble.NewCache(s.opts.CacheSize)
	s.fence = newFenceFS()
	po := &pebble.Options{
		FS:                          s.fence,
		Cache:                       s.cache,
		MemTableSize:                s.opts.MemTableSize,
		MemTableStopWritesThreshold: 4,
		Lock:                        s.lock,
		Logger:                      &s.guard,
		EventListener:               s.guard.listener(),
		CompactionConcurrencyRange:  func() (int, int) { return 1, 1 },
		// WAL sync chunks let Pebble itself tell damage in a closed WAL's
		// middle blocks from a torn tail; older formats cannot. Ratcheting
		// an existing store up is one-way, and every build with this
		// Pebble reads it.
		FormatMajorVersion: pebble.FormatNewest,
	}
	defer func() {
		if r := recover(); r != nil {
			err = wrapOpen(s.dir, panicError(r))
		}
		if err != nil {
			s.cache.Unref()
			s.cache = nil
		}
	}()
	db, err := pebble.Open(s.dir, po)
	if err != nil {
		return wrapOpen(s.dir, err)
	}
	s.db = db
	return nil
}

func wrapOpen(dir string, err error) error {
	if isNoSpace(err) {
		return asDiskFull(dir, err)
	}
	if errors.Is(err, pebble.ErrCorruption) {
		return &CorruptError{Dir: dir, Detail: err.Error(), Cause: err}
	}
	return fmt.Errorf("store: open %s: %w", dir, err)
}

// checkSchema writes the schema version into a new store and refuses a
// store written by a newer build.
func (s *Store) checkSchema() error {
	v, closer, err := s.db.Get([]byte(schemaKey))
	switch {
	case errors.Is(err, pebble.ErrNotFound):
		b := s.db.NewBatch()
		_ = b.Set([]byte(schemaKey), []byte(strconv.Itoa(SchemaVersion)), nil)
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.commit(b, true)
	case err != nil:
		return fmt.Errorf("store: read schema version: %w", err)
	}
	sv := string(v)
	_ = closer.Close()
	got, err := strconv.Atoi(sv)
	if err != nil {
		return fmt.Errorf("store: %s: bad schema version %q", s.dir, sv)
	}
	if got > SchemaVersion {
		return fmt.Errorf("store: %s was written by a newer runbox (schema %d, this build reads up to %d); upgrade runbox: %w",
			s.dir, got, SchemaVersion, ErrSchemaTooNew)
	}
	if got < 2 {
		return s.upgradeShorts()
	}
	return nil
}

// Dir is the directory the store lives in.
func (s *Store) Dir() string { return s.dir }

// Close flushes nothing (the WAL already holds every write) and releases
// the directory lock. Calls after the first return ErrClosed.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.db == nil {
		return ErrClosed
	}
	s.mu.Lock()
	broken := s.broken
	s.mu.Unlock()
	abandoned, err := closeDB(s.db, broken != nil)
	s.db = nil
	if !abandoned {
		s.cache.Unref()
	} else {
		// Its goroutines may still retry flushes: fence them off before
		// the directory can be opened again. The DB still holds its
		// reference on the lock; drop it too so that a later Open in this
		// process can take over the directory.
		s.fence.raise()
		_ = s.lock.Close()
	}
	if lerr := s.lock.Close(); lerr != nil && err == nil {
		err = fmt.Errorf("store: release lock: %w", lerr)
	}
	return err
}

// reader runs fn with the database held open.
func (s *Store) reader(ctx context.Context, fn func(db *pebble.DB) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.db == nil {
		return ErrClosed
	}
	return fn(s.db)
}

// writer runs fn under the write mutex with a fresh batch, then commits the
// batch (durably when sync is set). fn may read through the database: no
// other write can interleave.
func (s *Store) writer(ctx context.Context, sync bool, fn func(db *pebble.DB, b *pebble.Batch) error) error {
	return s.write(ctx, func(db *pebble.DB, b *pebble.Batch) (bool, error) {
		return sync, fn(db, b)
	})
}

// write is writer where fn decides whether the commit must be durable.
func (s *Store) write(ctx context.Context, fn func(db *pebble.DB, b *pebble.Batch) (sync bool, err error)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.life.RLock()
	defer s.life.RUnlock()
	if s.db == nil {
		return ErrClosed
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken != nil {
		return s.broken
	}
	b := s.db.NewBatch()
	sync, err := fn(s.db, b)
	if err != nil {
		_ = b.Close()
		return err
	}
	return s.commit(b, sync)
}

// commit applies b. Called with mu held. A failure inside Pebble's commit
// path (an error, a recovered panic or a Fatalf it reported) leaves the DB
// unusable for writes, so the store is marked broken until reopened. So
// does a commit that stalls while flushes fail for lack of space: Pebble
// would wait for them forever.
func (s *Store) commit(b *pebble.Batch, sync bool) error {
	if err := s.guard.check(); err != nil {
		_ = b.Close()
		return err
	}
	fatals := s.guard.fatals.Load()
	opt := pebble.NoSync
	if sync {
		opt = pebble.Sync
	}
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- panicError(r)
			}
		}()
		done <- b.Commit(opt)
	}()
	var stalled time.Duration
	for {
		select {
		case err := <-done:
			if err != nil {
				return s.fail(err)
			}
			_ = b.Close()
			if s.guard.fatals.Load() != fatals {
				return s.fail(s.guard.lastFatal())
			}
			return nil
		case <-time.After(stallPoll):
			if s.guard.bgFull.Load() == 0 {
				stalled = 0
				continue
			}
			if stalled += stallPoll; stalled >= stallLimit {
				return s.fail(fmt.Errorf("write stalled %v while pebble cannot flush: %w", stalled, syscall.ENOSPC))
			}
		}
	}
}

// A commit that waits this long while flushes fail with ENOSPC gives up.
const (
	stallPoll  = 250 * time.Millisecond
	stallLimit = 2 * time.Second
)

func (s *Store) fail(err error) error {
	if isNoSpace(err) {
		s.broken = &diskFullError{dir: s.dir, cause: fmt.Errorf("%w (free space, then reopen the store)", err)}
	} else {
		s.broken = fmt.Errorf("store: write failed, reopen the store: %w", err)
	}
	return s.broken
}
