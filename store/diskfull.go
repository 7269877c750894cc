package store

// How Pebble (v2.1) behaves when the disk fills up, and what we do about it:
//
//   - A WAL write or sync that fails is reported to the committing batch,
//     and DB.Apply then calls Options.Logger.Fatalf("pebble: fatal commit
//     error"). The default logger calls os.Exit(1); the maintainers consider
//     this by design (cockroachdb/pebble#3427: "disk exhaustion warrants
//     manual intervention", CockroachDB keeps ballast files instead).
//   - The WAL writer's error is sticky: the next commit's WriteRecord fails
//     and commitWrite panics while holding the commit pipeline's mutex, so
//     the DB can neither write nor Close afterwards. Rotating a full memtable
//     to a new (preallocated) WAL panics the same way on ENOSPC.
//   - A MANIFEST write that fails during a flush or compaction is also a
//     Fatalf, from a background goroutine.
//   - A flush or compaction that cannot write its sstable only reports
//     EventListener.BackgroundError and retries; nothing is lost (the WAL
//     still has the data).
//
// So we (1) refuse writes with ErrDiskFull while free space is below
// Options.MinFreeBytes (a ballast without the file: Pebble never sees
// ENOSPC in the common case); (2) give Pebble a Logger whose Fatalf records
// the error and returns instead of exiting, and recover panics around each
// commit; either marks the Store broken, so no later write reaches the
// poisoned DB, and the write that failed returns an error matching
// ErrDiskFull; (3) on Close of a broken DB, give Pebble's Close a few
// seconds and abandon it if it hangs on the mutex a panic left locked.
// Reopening replays the WAL: every write that returned nil is there.

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// diskGuard is Pebble's logger and event listener, and the free-space check.
type diskGuard struct {
	dir     string
	minFree int64
	log     *slog.Logger

	fatals atomic.Uint64
	fatal  atomic.Pointer[error]
	// bgFull is when a flush or compaction last hit ENOSPC (unix ns; 0:
	// none since the last success). Writes are then refused until a flush
	// or compaction succeeds again, or, when none has failed for bgQuiet,
	// until release bytes are free (and at least the reserve). Pebble retries a failed flush at once, again and
	// again, each time writing part of an sstable and removing it, so the
	// free space seen between two tries says nothing: it let a write in
	// just after one was refused, into the memtable a flush cannot empty.
	bgFull  atomic.Int64
	release int64
	// off disables check; tests use it to let Pebble meet ENOSPC itself.
	off bool
}

func (g *diskGuard) init(dir string, o Options) {
	g.dir, g.minFree, g.log = dir, o.MinFreeBytes, o.Logger
	g.release = 2 * int64(o.MemTableSize)
}

// Infof implements pebble.Logger.
func (g *diskGuard) Infof(format string, args ...any) {
	if g.log != nil {
		g.log.Info(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

// Errorf implements pebble.Logger.
func (g *diskGuard) Errorf(format string, args ...any) {
	if g.log != nil {
		g.log.Error(fmt.Sprintf(format, args...), "component", "pebble")
	}
}

// Fatalf implements pebble.Logger. It records the error and returns
// instead of exiting the process; the store turns it into a failed write.
func (g *diskGuard) Fatalf(format string, args ...any) {
	var cause error
	for _, a := range args {
		if e, ok := a.(error); ok {
			cause = e
			break
		}
	}
	err := error(&fatalError{msg: fmt.Sprintf(format, args...), cause: cause})
	g.fatal.Store(&err)
	g.fatals.Add(1)
	if g.log != nil {
		g.log.Error("pebble fatal: "+err.Error(), "component", "pebble")
	}
}

func (g *diskGuard) lastFatal() error {
	if p := g.fatal.Load(); p != nil {
		return *p
	}
	return errors.New("pebble: fatal error")
}

type fatalError struct {
	msg   string
	cause error
}

func (e *fatalError) Error() string { return e.msg }
func (e *fatalError) Unwrap() error { return e.cause }

func (g *diskGuard) listener() *pebble.EventListener {
	return &pebble.EventListener{
		BackgroundError: func(err error) {
			if isNoSpace(err) {
				g.bgFull.Store(time.Now().UnixNano())
			}
			g.Errorf("background error: %v", err)
		},
		FlushEnd: func(i pebble.FlushInfo) {
			if i.Err == nil {
				g.bgFull.Store(0)
			}
		},
		CompactionEnd: func(i pebble.CompactionInfo) {
			if i.Err == nil {
				g.bgFull.Store(0)
			}
		},
	}
}

// bgQuiet is how long no background job may have failed for space before
// free space alone lets writes in again (a compaction Pebble does not
// retry at once leaves nothing else to say there is room).
const bgQuiet = 2 * time.Second

// check refuses a write while the filesystem is (nearly) full.
func (g *diskGuard) check() error {
	failed := g.bgFull.Load()
	bg := failed != 0
	if g.off || g.minFree < 0 && !bg {
		return nil
	}
	free, ok := freeBytes(g.dir)
	if !ok {
		return nil
	}
	limit := max(g.minFree, 0)
	if bg {
		limit = max(limit, g.release)
	}
	if free > limit && (!bg || time.Since(time.Unix(0, failed)) > bgQuiet) {
		g.bgFull.CompareAndSwap(failed, 0) // not a failure met since the load
		return nil
	}
	if bg {
		return &diskFullError{dir: g.dir, detail: fmt.Sprintf("pebble cannot flush for lack of space, %s free", human(free))}
	}
	return &diskFullError{dir: g.dir, detail: fmt.Sprintf("%s free, runbox keeps %s in reserve", human(free), human(limit))}
}

// diskFullError matches ErrDiskFull and says where and why.
type diskFullError struct {
	dir, detail string
	cause       error
}

func (e *diskFullError) Error() string {
	if e.cause != nil {
		return fmt.Sprintf("store: disk full under %s: %v", e.dir, e.cause)
	}
	return fmt.Sprintf("store: disk full under %s: %s", e.dir, e.detail)
}

func (e *diskFullError) Is(target error) bool { return target == ErrDiskFull }
func (e *diskFullError) Unwrap() error        { return e.cause }

func human(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.0f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func isNoSpace(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) || errors.Is(err, ErrDiskFull) {
		return true
	}
	msg := err.Error()
	return strings.Contains(msg, "no space left on device") || strings.Contains(msg, "disk quota exceeded")
}

// asDiskFull marks err as ErrDiskFull when it is an ENOSPC.
func asDiskFull(dir string, err error) error {
	if isNoSpace(err) && !errors.Is(err, ErrDiskFull) {
		return &diskFullError{dir: dir, cause: err}
	}
	return err
}

func panicError(r any) error {
	if err, ok := r.(error); ok {
		return fmt.Errorf("pebble panic: %w", err)
	}
	return fmt.Errorf("pebble panic: %v", r)
}

// closeDB closes db, recovering a panic. After a failed write Pebble's
// Close can block forever on the commit mutex that a panic left locked;
// then the DB is abandoned (its goroutines are stuck on the same mutexes
// and write nothing) and abandoned is true.
func closeDB(db *pebble.DB, broken bool) (abandoned bool, err error) {
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				done <- panicError(r)
			}
		}()
		done <- db.Close()
	}()
	if !broken {
		if err := <-done; err != nil {
			return false, fmt.Errorf("store: close: %w", err)
		}
		return false, nil
	}
	select {
	case <-done:
		// Errors from closing a DB whose WAL already failed say nothing new.
		return false, nil
	case <-time.After(5 * time.Second):
		return true, errors.New("store: close: pebble did not close after a failed write; the store was abandoned")
	}
}
