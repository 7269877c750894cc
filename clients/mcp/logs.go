package mcp

import (
	"bytes"
	"context"
	"fmt"
	"net/url"
	"strings"
	"unicode/utf8"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api/client"
)

// outputStreams are what local_logs reads when no stream is named: the
// command's output and its setup's, not runbox's own meta records.
var outputStreams = []string{"stdout", "stderr", "setup-stdout", "setup-stderr"}

// logs reads a run's output, bounded to maxLogText bytes. Offsets count
// bytes of the chosen streams' output as the run wrote it, so a caller
// pages with since_offset = the last next_offset and misses nothing.
func (s *server) logs(ctx context.Context, _ *mcpsdk.CallToolRequest, in logsIn) (*mcpsdk.CallToolResult, logsOut, error) {
	streams := outputStreams
	name := "all"
	if in.Stream != "" && in.Stream != "all" {
		streams, name = []string{in.Stream}, in.Stream
	}
	// The run first: its id, resolved, and whether more output can come.
	r, err := s.c.Get(ctx, in.RunID)
	if err != nil {
		return nil, logsOut{}, daemonError(err, "run", in.RunID)
	}
	var from int64
	if in.SinceOffset != nil {
		from = *in.SinceOffset
		if from < 0 {
			return nil, logsOut{}, toolError("since_offset is %d: give 0 or the next_offset of an earlier local_logs call", from)
		}
	}
	tail := 0
	if in.TailLines != nil {
		tail = *in.TailLines
		if tail < 1 || tail > maxTailLines {
			return nil, logsOut{}, toolError("tail_lines is %d: give 1 to %d", tail, maxTailLines)
		}
	}
	if in.SinceOffset != nil && in.TailLines != nil {
		return nil, logsOut{}, toolError("tail_lines and since_offset contradict each other: give tail_lines for the last lines of the output, or since_offset to read on from an offset (the next_offset of an earlier call), not both")
	}
	w := window{from: from, forward: in.SinceOffset != nil, max: maxLogText}
	q := url.Values{"stream": streams}
	err = s.c.Logs(ctx, r.ID, q, func(f client.Frame) error { w.add(f.Data); return nil })
	if err != nil && !client.IsNotFound(err) { // a run that never started has no log yet
		return nil, logsOut{}, daemonError(err, "run", in.RunID)
	}
	text, off, next, truncated := w.result(tail)
	out := logsOut{
		RunID: r.ID, Stream: name, Text: text, Offset: off, NextOffset: next, TotalBytes: w.total,
		Truncated: truncated, State: string(r.State), Done: r.State.Terminal(),
	}
	// A run whose smoke run failed has only that run's output (the
	// daemon serves it in place of the run's own).
	out.Smoke = r.Failure != nil && r.Failure.Code == "SMOKE_FAILED"
	var sum string
	if out.Smoke {
		sum = "[the smoke run's output: it failed, so the full run did not start]\n"
	}
	switch {
	case w.total == 0:
		sum += fmt.Sprintf("run %s (%s) has written no output on %s yet.", r.ID, r.State, name)
	case from > w.total:
		sum += fmt.Sprintf("since_offset %d is past the end of the output (%d bytes so far): nothing to read; next_offset is the end, %d.", from, w.total, w.total)
	default:
		sum += fmt.Sprintf("run %s (%s), %s bytes %d..%d of %d", r.ID, r.State, name, off, next, w.total)
		if truncated {
			sum += fmt.Sprintf(" (cut to %d KiB; read on with since_offset)", maxLogText>>10)
		}
		sum += ":\n" + text
	}
	return textResult("%s", sum), out, nil
}

// window keeps the part of an output stream local_logs returns: forward
// from an offset (paging), or the end (tail), never more than twice max
// bytes in memory.
type window struct {
	from    int64 // offset asked for
	forward bool  // keep what follows from, else the end
	max     int
	total   int64  // bytes seen
	start   int64  // offset of buf[0]
	buf     []byte // kept bytes
}

func (w *window) add(p []byte) {
	end := w.total + int64(len(p))
	defer func() { w.total = end }()
	if end <= w.from {
		return
	}
	if w.total < w.from { // the offset falls inside p
		p = p[w.from-w.total:]
		w.start = w.from
	} else if len(w.buf) == 0 {
		w.start = w.total
	}
	if w.forward {
		room := w.max + utf8.UTFMax - len(w.buf)
		if room <= 0 {
			return
		}
		if len(p) > room {
			p = p[:room]
		}
		w.buf = append(w.buf, p...)
		return
	}
	w.buf = append(w.buf, p...)
	if len(w.buf) > 2*w.max {
		drop := len(w.buf) - w.max
		w.buf = append(w.buf[:0], w.buf[drop:]...)
		w.start += int64(drop)
	}
}

// result is the text and its offsets. Cuts fall on character boundaries;
// invalid UTF-8 the run wrote is replaced.
func (w *window) result(tail int) (text string, off, next int64, truncated bool) {
	b, off := w.buf, w.start
	if len(b) == 0 {
		// Past the end: go on from the end, not from a bogus offset.
		return "", min(w.from, w.total), w.total, false
	}
	if w.forward {
		if len(b) > w.max {
			b, truncated = b[:w.max], true
		}
		// Leave a character split at the end for the next call.
		if cut := incompleteTail(b); cut > 0 && (truncated || off+int64(len(b)) < w.total) {
			b = b[:len(b)-cut]
		}
		return strings.ToValidUTF8(string(b), "\uFFFD"), off, off + int64(len(b)), truncated || off+int64(len(b)) < w.total
	}
	if tail > 0 {
		i, found := lastLines(b, tail)
		b, off = b[i:], off+int64(i)
		// Fewer lines than asked, yet earlier output exists: cut.
		truncated = !found && off > w.from
	} else {
		truncated = off > w.from
	}
	if len(b) > w.max {
		cut := len(b) - w.max
		b, off, truncated = b[cut:], off+int64(cut), true
	}
	// Start on a character boundary.
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b, off = b[1:], off+1
	}
	return strings.ToValidUTF8(string(b), "\uFFFD"), off, w.total, truncated
}

// lastLines is where the last n lines of b start (a last line without a
// newline counts), and whether b holds n lines.
func lastLines(b []byte, n int) (int, bool) {
	i := len(b)
	if i > 0 && b[i-1] == '\n' {
		i--
	}
	for ; n > 0; n-- {
		j := bytes.LastIndexByte(b[:i], '\n')
		if j < 0 {
			return 0, n == 1
		}
		i = j
	}
	return i + 1, true
}

// incompleteTail is the number of bytes at the end of b that begin a
// UTF-8 character without finishing it.
func incompleteTail(b []byte) int {
	for i := 1; i <= utf8.UTFMax && i <= len(b); i++ {
		c := b[len(b)-i]
		if utf8.RuneStart(c) {
			if c < utf8.RuneSelf || utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}
