package docker

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/docker/docker/api/types/versions"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox/runlog"
)

// The lost newline of Docker < 23 (API < 1.42).
//
// Docker splits a line longer than 16 KiB (its copy buffer) into partial
// messages: full ones of exactly 16 KiB and a last one holding the rest
// up to the newline. Before Docker 23 the "local" driver's reader added the
// newline back only to unsplit lines, so the last part of a split line
// comes back without it. Such a "candidate" (shorter than 16 KiB, no
// trailing newline) is otherwise produced only by output the container
// left unterminated when the stream closed, which is always the stream's
// final message. So when another message follows a candidate on the same
// stream, the candidate was the end of a split line: runbox writes the
// missing "\n" as a record of its own (a "patch", stamped with the
// candidate's timestamp, which no message can share) and then the new
// message. Patches are not messages: cursorFromLog recognises and skips
// them when counting. Only a candidate that ends its stream and continues
// a split line is ambiguous ("...long line\n" or "...long line" at exit);
// for it runbox reads the partial flag of the driver's last entry from
// its file (root, local daemon), else assumes the newline. Newer daemons
// never produce a candidate that something follows, so this is inert there.
const partialSize = 16 << 10

type tail struct {
	ts    int64
	full  bool // last record was a full 16 KiB partial
	cand  bool // last record is an unpatched candidate
	split bool // ... which continued a split line (after a full partial with its timestamp)
}

func (c *cursor) note(s runlog.Stream, ts int64, data []byte) {
	t := &c.tails[s]
	nl := len(data) > 0 && data[len(data)-1] == '\n'
	cand := !nl && len(data) < partialSize
	*t = tail{ts: ts, full: !nl && len(data) == partialSize, cand: cand, split: cand && t.full && t.ts == ts}
}

func (c *cursor) isPatch(s runlog.Stream, ts int64, data []byte) bool {
	t := c.tails[s]
	return t.cand && t.ts == ts && len(data) == 1 && data[0] == '\n'
}

// write copies one message to the run log as one record, patching the
// previous candidate of its stream first.
func (c *cursor) write(w *runlog.Writer, s runlog.Stream, ts time.Time, data []byte) error {
	if err := c.patch(w, s); err != nil {
		return err
	}
	if len(data) == 0 {
		data = []byte{'\n'} // the empty last part of a split line, on old daemons
	}
	if err := w.WriteAt(s, ts, data); err != nil {
		return err
	}
	c.add(ts.UnixNano())
	c.note(s, ts.UnixNano(), data)
	return nil
}

func (c *cursor) patch(w *runlog.Writer, s runlog.Stream) error {
	t := &c.tails[s]
	if !t.cand {
		return nil
	}
	if err := w.WriteAt(s, time.Unix(0, t.ts), []byte{'\n'}); err != nil {
		return err
	}
	t.cand = false
	return nil
}

// finishTails settles the candidates that end their streams, once the
// container has stopped and everything is copied.
func (c *cursor) finishTails(ctx context.Context, cli *client.Client, id string, w *runlog.Writer) error {
	var last map[runlog.Stream]entry
	for _, s := range []runlog.Stream{runlog.Stdout, runlog.Stderr} {
		t := c.tails[s]
		if !t.cand || !t.split {
			continue
		}
		if last == nil {
			v, err := cli.ServerVersion(ctx)
			if err != nil || !versions.LessThan(v.APIVersion, "1.42") {
				return err // a fixed daemon: the candidate really is unterminated
			}
			last = lastEntries(ctx, cli, id)
		}
		if e, ok := last[s]; ok && e.ts == t.ts && !e.last {
			continue // the driver says: cut off by the end of the stream
		}
		if err := c.patch(w, s); err != nil {
			return err
		}
	}
	return nil
}

type entry struct {
	ts   int64
	last bool // partial metadata says last part of a line
}

// lastEntries reads the final entries of the container's "local" driver
// file backwards (each entry is length, protobuf LogEntry, length) until
// it has seen both streams. It returns what it could read, possibly nothing.
func lastEntries(ctx context.Context, cli *client.Client, id string) map[runlog.Stream]entry {
	out := map[runlog.Stream]entry{}
	info, err := cli.Info(ctx)
	if err != nil {
		return out
	}
	f, err := os.Open(filepath.Join(info.DockerRootDir, "containers", id, "local-logs", "container.log"))
	if err != nil {
		return out
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return out
	}
	end := st.Size()
	var n4 [4]byte
	for i := 0; i < 256 && end >= 8 && len(out) < 2; i++ {
		if _, err := f.ReadAt(n4[:], end-4); err != nil {
			return out
		}
		n := int64(binary.BigEndian.Uint32(n4[:]))
		if n > 2<<20 || end-8-n < 0 {
			return out
		}
		buf := make([]byte, n)
		if _, err := f.ReadAt(buf, end-4-n); err != nil {
			return out
		}
		if src, e, err := decodeEntry(buf); err == nil {
			s := map[string]runlog.Stream{"stdout": runlog.Stdout, "stderr": runlog.Stderr}[src]
			if _, seen := out[s]; s != 0 && !seen {
				out[s] = e
			}
		}
		end -= n + 8
	}
	return out
}

// decodeEntry reads the fields of a LogEntry that matter here: source (1),
// time_nano (2) and partial_log_metadata.last (5.1).
func decodeEntry(b []byte) (string, entry, error) {
	var src string
	var e entry
	err := protoFields(b, func(field int, v uint64, p []byte) error {
		switch field {
		case 1:
			src = string(p)
		case 2:
			e.ts = int64(v)
		case 5:
			return protoFields(p, func(f int, v uint64, _ []byte) error {
				if f == 1 {
					e.last = v != 0
				}
				return nil
			})
		}
		return nil
	})
	return src, e, err
}

var errProto = errors.New("bad protobuf")

// protoFields walks varint (wire type 0) and length-delimited (2) fields.
func protoFields(b []byte, fn func(field int, v uint64, p []byte) error) error {
	r := bytes.NewReader(b)
	for r.Len() > 0 {
		key, err := binary.ReadUvarint(r)
		if err != nil {
			return errProto
		}
		var v uint64
		var p []byte
		switch key & 7 {
		case 0:
			if v, err = binary.ReadUvarint(r); err != nil {
				return errProto
			}
		case 2:
			n, err := binary.ReadUvarint(r)
			if err != nil || n > uint64(r.Len()) {
				return errProto
			}
			p = make([]byte, n)
			if _, err := io.ReadFull(r, p); err != nil {
				return errProto
			}
		default:
			return errProto
		}
		if err := fn(int(key>>3), v, p); err != nil {
			return err
		}
	}
	return nil
}
