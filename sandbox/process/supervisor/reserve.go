package supervisor

import (
	"errors"
	"os"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// reserveSize is the disk space held for the exit record: a record is a
// few hundred bytes, a filesystem allocates it a block or page (4 KiB)
// plus its temporary twin's; 64 KiB leaves room for larger blocks.
const reserveSize = 64 << 10

// Retrying the exit record on a full disk: the record is the run's
// result, so the supervisor waits for space (the daemon already has the
// record from the ready pipe when it started the run; a restarted one
// reads this file), but not forever.
const (
	recordRetry    = 500 * time.Millisecond
	recordDeadline = time.Hour
)

// reserveSpace makes a file of reserveSize at path whose blocks are
// really allocated, not promised: fallocate(2) where the filesystem has
// it (ext4, xfs, btrfs, tmpfs: the blocks are taken at once, and no sync
// is needed for that), else zeros written and synced. The sync cost
// 0.6 ms of every run's start on ext4 (BENCHMARKS.md, issue 23); the
// space is the same.
func reserveSpace(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, protocol.SecretMode)
	if err != nil {
		return err
	}
	if allocate(f, reserveSize) == nil {
		if err := f.Close(); err != nil {
			os.Remove(path)
			return err
		}
		return nil
	}
	_, werr := f.Write(make([]byte, reserveSize))
	serr := f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		os.Remove(path)
		return err
	}
	return nil
}

// writeRecord is protocol.WriteTemp (synced) that waits out a full disk.
func writeRecord(path string, b []byte) (commit func() error, err error) {
	deadline := time.Now().Add(recordDeadline)
	for {
		commit, err = protocol.WriteTemp(path, b, true)
		if err == nil || !diskFull(err) || time.Now().After(deadline) {
			return commit, err
		}
		time.Sleep(recordRetry)
	}
}

func diskFull(err error) bool {
	return errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT)
}
