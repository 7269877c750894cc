package store

import (
	"errors"
	"os"
	"sync/atomic"

	"github.com/cockroachdb/pebble/v2/vfs"
)

// errFenced is what an abandoned Pebble instance gets from every write.
var errFenced = errors.New("store: pebble instance abandoned after a failed write; writes are fenced off")

// fenceFS passes everything through to the OS until it is raised; after
// that every mutation fails. A DB abandoned after a failed write (its
// Close hung on a mutex a panic left locked, or a commit stalled because
// flushes hit ENOSPC) keeps goroutines that retry flushes; the fence makes
// sure none of them touches the directory once another Open may own it.
type fenceFS struct {
	vfs.FS
	up atomic.Bool
}

func newFenceFS() *fenceFS { return &fenceFS{FS: vfs.Default} }

func (f *fenceFS) raise() { f.up.Store(true) }

func (f *fenceFS) err() error {
	if f.up.Load() {
		return errFenced
	}
	return nil
}

func (f *fenceFS) wrap(file vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return &fenceFile{File: file, fs: f}, nil
}

func (f *fenceFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.Create(name, c))
}

func (f *fenceFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return f.wrap(f.FS.Open(name, opts...))
}

func (f *fenceFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.OpenReadWrite(name, c, opts...))
}

func (f *fenceFS) OpenDir(name string) (vfs.File, error) { return f.wrap(f.FS.OpenDir(name)) }

func (f *fenceFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	if err := f.err(); err != nil {
		return nil, err
	}
	return f.wrap(f.FS.ReuseForWrite(oldname, newname, c))
}

func (f *fenceFS) Link(oldname, newname string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.FS.Link(oldname, newname)
}

func (f *fenceFS) Remove(name string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.FS.Remove(name)
}

func (f *fenceFS) RemoveAll(name string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.FS.RemoveAll(name)
}

func (f *fenceFS) Rename(oldname, newname string) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.FS.Rename(oldname, newname)
}

func (f *fenceFS) MkdirAll(dir string, perm os.FileMode) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.FS.MkdirAll(dir, perm)
}

func (f *fenceFS) Unwrap() vfs.FS { return f.FS }

// fenceFile refuses writes and syncs once its FS is fenced.
type fenceFile struct {
	vfs.File
	fs *fenceFS
}

func (f *fenceFile) Write(p []byte) (int, error) {
	if err := f.fs.err(); err != nil {
		return 0, err
	}
	return f.File.Write(p)
}

func (f *fenceFile) WriteAt(p []byte, off int64) (int, error) {
	if err := f.fs.err(); err != nil {
		return 0, err
	}
	return f.File.WriteAt(p, off)
}

func (f *fenceFile) Preallocate(off, n int64) error {
	if err := f.fs.err(); err != nil {
		return err
	}
	return f.File.Preallocate(off, n)
}

func (f *fenceFile) Sync() error {
	if err := f.fs.err(); err != nil {
		return err
	}
	return f.File.Sync()
}

func (f *fenceFile) SyncData() error {
	if err := f.fs.err(); err != nil {
		return err
	}
	return f.File.SyncData()
}

func (f *fenceFile) SyncTo(n int64) (bool, error) {
	if err := f.fs.err(); err != nil {
		return false, err
	}
	return f.File.SyncTo(n)
}
