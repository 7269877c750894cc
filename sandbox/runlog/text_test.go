package runlog

import (
	"bytes"
	"runtime"
	"strings"
	"testing"
)

func TestTextDecoder(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"ascii", []string{"hello"}, "hello"},
		{"rune split in two", []string{"caf\xc3", "\xa9!"}, "café!"},
		{"rune split in three", []string{"\xf0\x9f", "\x98", "\x80"}, "😀"},
		{"invalid bytes", []string{"a\xffb\xfe"}, "a\uFFFDb\uFFFD"},
		{"truncated rune mid-stream", []string{"\xe2\x82", "x"}, "\uFFFD\uFFFDx"},
		{"truncated rune at end", []string{"ok\xe2\x82"}, "ok\uFFFD\uFFFD"},
		{"lone continuation", []string{"\x80abc"}, "\uFFFDabc"},
		{"empty chunks", []string{"", "\xc3", "", "\xa9"}, "é"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d TextDecoder
			var out []byte
			for _, c := range tt.chunks {
				out = append(out, d.Decode([]byte(c))...)
			}
			out = append(out, d.Flush()...)
			if string(out) != tt.want {
				t.Fatalf("got %q, want %q", out, tt.want)
			}
		})
	}
}

func TestLineSplitter(t *testing.T) {
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines", []string{"a\nb\n"}, []string{"a", "b"}},
		{"line across writes", []string{"ab", "c\nd", "e\n"}, []string{"abc", "de"}},
		{"crlf", []string{"a\r\nb\r\n"}, []string{"a", "b"}},
		{"crlf split across writes", []string{"a\r", "\nb\r", "\n"}, []string{"a", "b"}},
		{"cr redraws", []string{" 10%\r 50%\r100%\ndone\n"}, []string{" 10%", " 50%", "100%", "done"}},
		{"cr redraw across writes", []string{" 10%\r", " 50%\r", "100%\n"}, []string{" 10%", " 50%", "100%"}},
		{"empty lines", []string{"\n\n"}, []string{"", ""}},
		{"unterminated tail", []string{"a\nrest"}, []string{"a", "rest"}},
		{"invalid utf8 replaced", []string{"x\xffy\n"}, []string{"x\uFFFDy"}},
		{"overlong cut", []string{"0123456789abcdef\nok\n"}, []string{"01234567", "ok"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewLineSplitter(8)
			var got []string
			emit := func(l string) { got = append(got, l) }
			for _, w := range tt.writes {
				s.Write([]byte(w), emit)
			}
			s.Close(emit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestLineSplitterLongLine feeds a 50 MB line with no newline in 64 KiB
// writes: memory stays near the per-line cap, not the line's size.
func TestLineSplitterLongLine(t *testing.T) {
	const max = 64 << 10
	s := NewLineSplitter(max)
	chunk := bytes.Repeat([]byte("x"), 64<<10)
	var got []string
	emit := func(l string) { got = append(got, l) }

	runtime.GC()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for written := 0; written < 50<<20; written += len(chunk) {
		s.Write(chunk, emit)
	}
	runtime.ReadMemStats(&after)
	s.Write([]byte("\nnext\n"), emit)

	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4*max {
		t.Errorf("allocated %d bytes for a 50 MB line (cap %d)", grew, max)
	}
	if len(got) != 2 || len(got[0]) != max || got[1] != "next" {
		t.Fatalf("got %d lines, first %d bytes", len(got), len(got[0]))
	}
}
