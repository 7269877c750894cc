// Package jsonfile keeps small JSON records on disk so that a crash leaves
// the old record or the new one, never half of one: the exit records,
// queued specs and backend state that let a restarted daemon find out what
// happened while it was gone.
package jsonfile

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// Mode is the permission of every record: they may hold secrets.
const Mode = 0o600

// TmpSuffix names a record's temporary twin, written before the rename.
const TmpSuffix = ".tmp"

// Write writes v to path atomically (see WriteTemp); with sync the data is
// on disk before the rename.
func Write(path string, v any, sync bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	commit, err := WriteTemp(path, b, sync)
	if err != nil {
		return err
	}
	return commit()
}

// WriteDurable is Write with the data and the rename on disk when it
// returns (the directory is synced too).
func WriteDurable(path string, v any) error {
	if err := Write(path, v, true); err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// WriteTemp writes data to path's temporary twin; commit renames it into
// place, so readers see no file or the whole new one. (The directory is
// not synced: a crash may lose the rename, never expose a torn file.)
func WriteTemp(path string, data []byte, sync bool) (commit func() error, err error) {
	tmp := path + TmpSuffix
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, Mode)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(data)
	var serr error
	if sync {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() error {
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}, nil
}

// Read decodes the JSON file at path into v.
func Read(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Empty takes a record's contents away and keeps its file: a record that
// may hold secrets (a queued spec) is emptied once it has served, where it
// used to be removed. Each removed file costs later file creations on an
// ext4 disk without a journal, for minutes: it never reuses an inode freed
// lately and passes over each one, reading its entry, at every creation in
// the group, so a run that removed its files slowed down the runs after it
// (BENCHMARKS.md, issue 23). Where truncating fails, the file is removed.
// An emptied record reads as none (ReadHeld, Held).
func Empty(path string) {
	if err := os.Truncate(path, 0); err != nil && !errors.Is(err, os.ErrNotExist) {
		os.Remove(path)
	}
}

// Held reports whether the record at path exists and was not emptied.
func Held(path string) bool {
	st, err := os.Lstat(path)
	return err == nil && st.Size() > 0
}

// ReadHeld is Read for a record that may have been emptied (Empty): an
// emptied one is os.ErrNotExist, as a removed one was.
func ReadHeld(path string, v any) error {
	b, err := os.ReadFile(path)
	if err == nil && len(b) == 0 {
		err = fmt.Errorf("%s emptied: %w", filepath.Base(path), os.ErrNotExist)
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}

// Replace is Write (unsynced) for a record rewritten several times in a
// row, without freeing a file (see Empty): the new record takes the old
// one's place by exchanging the two files (renameat2's RENAME_EXCHANGE
// where the filesystem has it; a rename elsewhere), and the old one, now
// the temporary twin, is emptied and reused by the next write. Readers see
// the old record or the new one whole. Only for records that hold no
// secrets: the old one lives on under the twin's name until it is emptied,
// just after.
func Replace(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + TmpSuffix
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, Mode)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if err := errors.Join(werr, f.Close()); err != nil {
		os.Remove(tmp)
		return err
	}
	if exchange(tmp, path) == nil {
		Empty(tmp)
		return nil
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}
