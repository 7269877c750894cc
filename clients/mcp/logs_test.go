package mcp

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLocalLogs(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	writeFile(t, wd, "out.sh", `echo one; echo two; sleep 0.5; echo "oops" >&2; sleep 0.5; printf 'café ☕\nlast'`)
	a := newAgent(t, d, wd)
	id := a.start([]any{"sh", "out.sh"}, nil)
	a.waitDone(id)
	all := "one\ntwo\noops\ncafé ☕\nlast"
	tests := []struct {
		name       string
		args       map[string]any
		text       string
		off, next  int64
		truncated  bool
		streamName string
	}{
		{"everything", nil, all, 0, int64(len(all)), false, "all"},
		{"tail", map[string]any{"tail_lines": 2}, "café ☕\nlast", int64(strings.Index(all, "café")), int64(len(all)), false, "all"},
		{"tail longer than the output", map[string]any{"tail_lines": 100}, all, 0, int64(len(all)), false, "all"},
		{"stderr", map[string]any{"stream": "stderr"}, "oops\n", 0, 5, false, "stderr"},
		{"stdout from an offset", map[string]any{"stream": "stdout", "since_offset": 4}, "two\ncafé ☕\nlast", 4, int64(len(all) - 5), false, "stdout"},
		{"past the end", map[string]any{"since_offset": 1000}, "", int64(len(all)), int64(len(all)), false, "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a.t = t
			args := map[string]any{"run_id": id}
			for k, v := range tt.args {
				args[k] = v
			}
			var l logsOut
			text := a.ok("local_logs", args, &l)
			if l.Text != tt.text || l.Offset != tt.off || l.NextOffset != tt.next || l.Truncated != tt.truncated || l.Stream != tt.streamName || !l.Done || l.RunID != id {
				t.Errorf("got %+v\nwant text %q offsets %d..%d truncated %v", l, tt.text, tt.off, tt.next, tt.truncated)
			}
			if tt.text != "" && !strings.Contains(text, tt.text) {
				t.Errorf("summary %q lacks the text", text)
			}
		})
	}
	a.t = t
}

// A long output comes back in bounded pieces; paging with next_offset
// reads every byte once, and no piece splits a character.
func TestLocalLogsPaging(t *testing.T) {
	d := startDaemon(t)
	wd := t.TempDir()
	// 3000 lines of 40 bytes (~117 KiB), with two-byte characters.
	writeFile(t, wd, "big.sh", `i=0; while [ $i -lt 3000 ]; do printf 'line %05d ééééééééééééééééé\n' $i; i=$((i+1)); done`)
	a := newAgent(t, d, wd)
	id := a.start([]any{"sh", "big.sh"}, nil)
	a.waitDone(id)
	var want strings.Builder
	for i := range 3000 {
		fmt.Fprintf(&want, "line %05d ééééééééééééééééé\n", i)
	}
	var end logsOut
	a.ok("local_logs", map[string]any{"run_id": id}, &end)
	if !end.Truncated || len(end.Text) > maxLogText || !strings.HasSuffix(want.String(), end.Text) || end.NextOffset != int64(want.Len()) {
		t.Fatalf("end of a long output: %d bytes, truncated %v, next %d", len(end.Text), end.Truncated, end.NextOffset)
	}
	var got strings.Builder
	off, pages := int64(0), 0
	for {
		var l logsOut
		a.ok("local_logs", map[string]any{"run_id": id, "since_offset": off}, &l)
		if l.Offset != off || len(l.Text) > maxLogText || !utf8.ValidString(l.Text) || strings.ContainsRune(l.Text, utf8.RuneError) {
			t.Fatalf("page at %d: offset %d, %d bytes", off, l.Offset, len(l.Text))
		}
		got.WriteString(l.Text)
		pages++
		if l.NextOffset == off {
			break
		}
		off = l.NextOffset
	}
	if got.String() != want.String() || pages < 4 {
		t.Errorf("paged %d bytes in %d pages, want %d bytes in at least 4", got.Len(), pages, want.Len())
	}
}

// The window keeps what local_logs returns whatever the frame sizes.
func TestWindow(t *testing.T) {
	data := []byte(strings.Repeat("ab€\n", 100)) // 600 bytes, 3-byte characters
	for _, frame := range []int{1, 2, 7, 600} {
		t.Run(fmt.Sprint("frame ", frame), func(t *testing.T) {
			feed := func(w *window) {
				for i := 0; i < len(data); i += frame {
					w.add(data[i:min(i+frame, len(data))])
				}
			}
			// Forward from 2: starts there, ends on a character boundary.
			w := window{from: 2, forward: true, max: 50}
			feed(&w)
			text, off, next, trunc := w.result(0)
			if off != 2 || !trunc || len(text) > 50 || next-off != int64(len(text)) || string(data[off:next]) != text {
				t.Errorf("forward: %q %d..%d %v", text, off, next, trunc)
			}
			// Tail 3 lines.
			w = window{max: 50}
			feed(&w)
			text, off, next, trunc = w.result(3)
			if text != "ab€\nab€\nab€\n" || off != 600-18 || next != 600 || trunc {
				t.Errorf("tail: %q %d..%d %v", text, off, next, trunc)
			}
			// The end, cut to max on a character boundary.
			text, off, _, trunc = w.result(0)
			if !trunc || len(text) > 50 || !utf8.ValidString(text) || string(data[off:]) != text {
				t.Errorf("end: %q from %d, %v", text, off, trunc)
			}
		})
	}
}
