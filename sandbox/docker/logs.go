package docker

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox/runlog"
)

// Copying output: why ContainerLogs, and how resuming stays exact.
//
// The container writes to Docker's "local" log driver, which stores each
// message's bytes as-is (json-file would turn invalid UTF-8 into U+FFFD)
// and cuts lines longer than 16 KiB into partial messages that, read back,
// concatenate to the original bytes; only a complete line gets its "\n"
// back. ContainerLogs with timestamps frames every message as one stdcopy
// frame "TIMESTAMP SP BYTES", so message boundaries and Docker's own
// timestamps are both visible. A slow consumer of the run log never
// blocks the container: the container only ever writes to the log driver.
//
// Each message (1 byte to 16 KiB) becomes exactly one run log record
// stamped with the message's timestamp, so the records of the container's
// streams in the run log are a prefix of the driver's message sequence.
// Timestamps are not unique (all parts of a split line share one) and not
// strictly ordered (stdout and stderr are stamped before taking the
// driver's lock), so "resume after the last timestamp" would be wrong.
// Instead, with M the newest timestamp copied so far and W = M - window,
// the messages at or after W that were already copied are exactly the
// first k of the driver's messages at or after W, where k counts the
// run log's records at or after W. Resuming asks Docker for messages since
// a bit before W, drops those before W itself (so the daemon's inclusive
// or exclusive "since" does not matter), skips k, and copies the rest.
// This misses nothing unless two messages were stamped more than window
// apart in the wrong order. Old daemons drop one newline; legacy.go puts
// it back without breaking the one-record-per-message rule.
const window = 10 * time.Second

// cursor tracks what has been copied from the driver to the run log.
type cursor struct {
	max    int64   // newest timestamp copied (unix ns)
	recent []int64 // timestamps copied, oldest first, pruned to 2*window before max
	tails  [3]tail // per stream (index runlog.Stdout, runlog.Stderr); see legacy.go
}

func (c *cursor) add(ts int64) {
	c.max = max(c.max, ts)
	c.recent = append(c.recent, ts)
	if len(c.recent) > 4096 && c.recent[0] < c.max-int64(2*window) {
		cut := 0
		for cut < len(c.recent) && c.recent[cut] < c.max-int64(2*window) {
			cut++
		}
		c.recent = append(c.recent[:0], c.recent[cut:]...)
	}
}

// resume returns W and k (see above); a zero W means "from the start".
func (c *cursor) resume() (from int64, skip int) {
	if len(c.recent) == 0 {
		return 0, 0
	}
	from = c.max - int64(window)
	for _, ts := range c.recent {
		if ts >= from {
			skip++
		}
	}
	return from, skip
}

// cursorFromLog rebuilds the cursor from the container-stream records of
// an existing run log (setup and meta records come from runbox, not the
// driver).
func cursorFromLog(path string) (*cursor, error) {
	c := &cursor{}
	err := runlog.ReadAll(path, func(r runlog.Record) error {
		if r.Stream != runlog.Stdout && r.Stream != runlog.Stderr {
			return nil
		}
		ts := r.Time.UnixNano()
		if c.isPatch(r.Stream, ts, r.Data) {
			c.tails[r.Stream].cand = false
			return nil
		}
		c.add(ts)
		c.note(r.Stream, ts, r.Data)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("read run log: %w", err)
	}
	return c, nil
}

// copyLogs copies the driver's messages not yet in the run log, following
// new ones while the container runs when follow is set.
func copyLogs(ctx context.Context, cli *client.Client, id string, follow bool, w *runlog.Writer, cur *cursor) error {
	from, skip := cur.resume()
	opts := container.LogsOptions{ShowStdout: true, ShowStderr: true, Timestamps: true, Follow: follow}
	if from != 0 {
		since := time.Unix(0, from).Add(-time.Second)
		opts.Since = fmt.Sprintf("%d.%09d", since.Unix(), since.Nanosecond())
	}
	rc, err := cli.ContainerLogs(ctx, id, opts)
	if err != nil {
		return fmt.Errorf("container logs: %w", err)
	}
	defer rc.Close()
	r := bufio.NewReaderSize(rc, 256<<10)
	var hdr [8]byte
	var buf []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("container logs: %w", err)
		}
		n := int(binary.BigEndian.Uint32(hdr[4:]))
		if cap(buf) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(r, buf); err != nil {
			return fmt.Errorf("container logs: %w", err)
		}
		var s runlog.Stream
		switch hdr[0] {
		case 1:
			s = runlog.Stdout
		case 2:
			s = runlog.Stderr
		case 3:
			return fmt.Errorf("container logs: daemon error: %s", buf)
		default:
			return fmt.Errorf("container logs: unexpected stream %d", hdr[0])
		}
		ts, data, err := splitTimestamp(buf)
		if err != nil {
			return err
		}
		if from != 0 && ts.UnixNano() < from {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if err := cur.write(w, s, ts, data); err != nil {
			return err
		}
	}
}

// splitTimestamp cuts "2006-01-02T15:04:05.000000000Z " off a message.
func splitTimestamp(b []byte) (time.Time, []byte, error) {
	i := 0
	for i < len(b) && i < 64 && b[i] != ' ' {
		i++
	}
	if i == len(b) || b[i] != ' ' {
		return time.Time{}, nil, fmt.Errorf("container logs: message without timestamp")
	}
	ts, err := time.Parse(time.RFC3339Nano, string(b[:i]))
	if err != nil {
		return time.Time{}, nil, fmt.Errorf("container logs: %w", err)
	}
	return ts, b[i+1:], nil
}
