package tail

import (
	"strings"
	"testing"
)

func TestBuffer(t *testing.T) {
	tests := []struct {
		name   string
		b      *Buffer
		writes []string
		want   string
		bytes  string
	}{
		{"under the limit", New(8), []string{"ab", "cd"}, "abcd", "abcd"},
		{"keeps the last n", New(4), []string{"abc", "def"}, "cdef", "cdef"},
		{"one write over the limit", New(3), []string{"abcdefg"}, "efg", "efg"},
		{"exactly the limit", New(3), []string{"abc"}, "abc", "abc"},
		{"zero keeps nothing", New(0), []string{"abc"}, "", ""},
		{"head and tail", NewHeadTail(6), []string{"abc", "defgh", "ij"}, "abc\n[...]\nhij", "hij"},
		{"head and tail, nothing dropped", NewHeadTail(6), []string{"abcdef"}, "abcdef", "def"},
		{"head only filled", NewHeadTail(10), []string{"ab"}, "ab", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, w := range tt.writes {
				if n, err := tt.b.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := tt.b.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
			if got := string(tt.b.Bytes()); got != tt.bytes {
				t.Errorf("Bytes() = %q, want %q", got, tt.bytes)
			}
			tt.b.Reset()
			if got := tt.b.String(); got != "" {
				t.Errorf("after Reset: %q", got)
			}
		})
	}
}

func TestBufferBoundedUnderManyWrites(t *testing.T) {
	b := New(100)
	for i := 0; i < 10000; i++ {
		b.Write([]byte(strings.Repeat("x", i%37) + "\n"))
	}
	if n := len(b.Bytes()); n != 100 {
		t.Fatalf("kept %d bytes, want 100", n)
	}
}
