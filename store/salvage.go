package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// CorruptError is Open's answer for a store whose files are damaged: a
// hole in a WAL with writes after it, or anything Pebble itself calls
// corruption. The store is left untouched; Salvage recovers what it can.
type CorruptError struct {
	Dir    string
	Detail string
	Cause  error
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("store: %s is damaged: %s", e.Dir, e.Detail)
}

// Is makes a CorruptError match ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
func (e *CorruptError) Unwrap() error        { return e.Cause }

func walCorrupt(dir string, w *walScan) error {
	if w.sealed {
		return &CorruptError{Dir: dir, Detail: fmt.Sprintf(
			"wal %s has unreadable bytes at offset %d, in its last write(s) before it was closed cleanly (not a torn tail): Pebble would drop them",
			filepath.Base(w.path), w.breakAt)}
	}
	return &CorruptError{Dir: dir, Detail: fmt.Sprintf(
		"wal %s has unreadable bytes at offset %d and %d write(s) after them that Pebble would drop",
		filepath.Base(w.path), w.breakAt, w.after)}
}

// SalvageReport says what Salvage did.
type SalvageReport struct {
	// Backup is the copy of the damaged store directory, taken first.
	Backup string `json:"backup"`
	// WAL is the damaged log, when the damage was found in one.
	WAL string `json:"wal,omitempty"`
	// DamagedAt is the offset of the damage in WAL.
	DamagedAt int64 `json:"damaged_at,omitempty"`
	// Replayed counts the writes put back from WAL and the logs after it;
	// AfterDamage those of them found past the damaged bytes, which
	// Pebble would have dropped.
	Replayed    int `json:"replayed"`
	AfterDamage int `json:"after_damage"`
	// Unreadable counts writes that could not be put back.
	Unreadable int `json:"unreadable,omitempty"`
	// Fresh is set when the store's tables could not be opened at all: a
	// new store was started and filled with what the logs held.
	Fresh bool `json:"fresh,omitempty"`
	// Repair is what the index rebuild found and fixed.
	Repair *RepairReport `json:"repair,omitempty"`
}

// Salvage opens a damaged store, recovering every write that can be read.
// It copies the directory to a timestamped sibling first, so nothing it
// replaces is lost. The damaged WAL and every newer one are read here
// (past the damage, too), taken out of the directory and their writes
// applied again in order after Pebble has opened the rest; then indexes
// and submit keys are rebuilt from the records. A store whose tables
// Pebble cannot open is started afresh from what the logs held.
func Salvage(dir string, opts Options) (*Store, *SalvageReport, error) {
	opts = opts.withDefaults()
	lock, err := pebble.LockDirectory(dir, vfs.Default)
	if err != nil {
		return nil, nil, lockError(dir, err)
	}
	rep := &SalvageReport{}
	fail := func(err error) (*Store, *SalvageReport, error) {
		_ = lock.Close()
		return nil, rep, err
	}
	if rep.Backup, err = backupDir(dir); err != nil {
		return fail(err)
	}
	scans, bad, err := checkWALs(dir)
	if err != nil {
		return fail(err)
	}
	var batches [][]byte
	if bad != nil {
		rep.WAL, rep.DamagedAt, rep.AfterDamage = filepath.Base(bad.path), bad.breakAt, bad.after
		replay := false
		for _, w := range scans {
			if w == bad {
				replay = true
			}
			if !replay {
				continue
			}
			batches = append(batches, w.batches...)
			if err := os.Remove(w.path); err != nil {
				return fail(fmt.Errorf("store: salvage: set aside %s: %w", w.path, err))
			}
		}
	}
	s := &Store{dir: dir, opts: opts, lock: lock}
	s.guard.init(dir, opts)
	if err := s.openDB(); err != nil {
		if !errors.Is(err, ErrCorrupt) {
			return fail(err)
		}
		// The tables or manifest are damaged too: start over (the backup
		// keeps everything) with what the logs held.
		if err := emptyDir(dir); err != nil {
			return fail(err)
		}
		rep.Fresh = true
		if err := s.openDB(); err != nil {
			return fail(err)
		}
	}
	for _, repr := range batches {
		b := s.db.NewBatch()
		if err := b.SetRepr(append([]byte(nil), repr...)); err != nil {
			rep.Unreadable++
			_ = b.Close()
			continue
		}
		if err := b.Commit(pebble.NoSync); err != nil {
			_ = s.Close()
			return nil, rep, fmt.Errorf("store: salvage: apply a recovered write: %w", err)
		}
		_ = b.Close()
		rep.Replayed++
	}
	if err := s.checkSchema(); err != nil {
		_ = s.Close()
		return nil, rep, err
	}
	if rep.Repair, err = s.repair(); err != nil {
		_ = s.Close()
		return nil, rep, err
	}
	if err := s.loadShorts(); err != nil { // numbers go on after the last one kept
		_ = s.Close()
		return nil, rep, err
	}
	if err := s.db.Flush(); err != nil {
		_ = s.Close()
		return nil, rep, fmt.Errorf("store: salvage: flush: %w", err)
	}
	return s, rep, nil
}

// backupDir copies dir to dir.damaged-<UTC time> and returns the copy's path.
func backupDir(dir string) (string, error) {
	dst := fmt.Sprintf("%s.damaged-%s", filepath.Clean(dir), time.Now().UTC().Format("20060102T150405.000Z"))
	if err := copyDir(dir, dst); err != nil {
		return "", fmt.Errorf("store: back up %s: %w", dir, err)
	}
	return dst, nil
}

// BackupDir copies the store directory dir to a timestamped sibling (the
// store must not be open for writing) and returns its path.
func BackupDir(dir string) (string, error) { return backupDir(dir) }

func copyDir(src, dst string) error {
	if err := os.MkdirAll(dst, 0o700); err != nil {
		return err
	}
	ents, err := os.ReadDir(src)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		if err := copyFile(filepath.Join(src, e.Name()), filepath.Join(dst, e.Name())); err != nil {
			return err
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// emptyDir removes every file in dir but Pebble's LOCK.
func emptyDir(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			return fmt.Errorf("store: salvage: %w", err)
		}
	}
	return nil
}
