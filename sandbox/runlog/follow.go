package runlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// Follow calls fn for every whole record of the log at path from offset
// from onwards, waiting for more while the run goes on, like tail -f. It
// returns nil once done is closed and every record written before that has
// been delivered, ctx's error if ctx ends first, or fn's error. A log file
// that does not exist yet is waited for.
func Follow(ctx context.Context, path string, from int64, done <-chan struct{}, fn func(Record) error) error {
	return follow(ctx, path, from, done, false, fn)
}

// FollowShared is Follow without an allocation per record: a record's Data
// is valid only until fn returns, so fn must copy what it keeps.
func FollowShared(ctx context.Context, path string, from int64, done <-chan struct{}, fn func(Record) error) error {
	return follow(ctx, path, from, done, true, fn)
}

func follow(ctx context.Context, path string, from int64, done <-chan struct{}, reuse bool, fn func(Record) error) error {
	const poll = 25 * time.Millisecond
	var f *os.File
	var r *Reader
	defer func() {
		if f != nil {
			f.Close()
		}
	}()
	off := from // where the Reader starts once the file exists
	timer := time.NewTimer(poll)
	defer timer.Stop()
	for {
		finished := isClosed(done) // decide before reading, so nothing written before done is missed
		if f == nil {
			var err error
			f, err = os.Open(path)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("follow log: %w", err)
			}
			if f != nil {
				if _, err := f.Seek(off, io.SeekStart); err != nil {
					return fmt.Errorf("follow log: %w", err)
				}
				// One Reader for the whole follow: it keeps a record read
				// in part and resumes it when the writer appends the rest.
				r = NewReader(f, off)
				r.reuse = reuse
			}
		}
		if r != nil {
			for {
				rec, err := r.Next()
				if err != nil {
					if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
						break
					}
					return err
				}
				if err := fn(rec); err != nil {
					return err
				}
			}
		}
		if finished {
			return nil
		}
		timer.Reset(poll)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-done:
		case <-timer.C:
		}
	}
}

func isClosed(c <-chan struct{}) bool {
	if c == nil {
		return false
	}
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// ReadAll calls fn for every whole record already in the log.
func ReadAll(path string, fn func(Record) error) error {
	closed := make(chan struct{})
	close(closed)
	return Follow(context.Background(), path, 0, closed, fn)
}
