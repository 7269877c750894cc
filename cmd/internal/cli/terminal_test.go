package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

func TestDropMarks(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   string
	}{
		{"ordinary output", []string{"a\nb\n"}, "a\nb\n"},
		{"a progress line", []string{"a\n##PROGRESS## {\"step\": 1}\nb\n"}, "a\nb\n"},
		{"split across chunks", []string{"a\n##PRO", "GRESS## {\"step\"", ": 1}\nb\n"}, "a\nb\n"},
		{"a prefix that is not one", []string{"##PRO", "BLEM here\n"}, "##PROBLEM here\n"},
		{"the mark mid-line is output", []string{"x ##PROGRESS## {}\n"}, "x ##PROGRESS## {}\n"},
		{"a line without newline", []string{"loading..."}, "loading..."},
		{"a bar with carriage returns", []string{" 10%|█\r 20%|██\r"}, " 10%|█\r 20%|██\r"},
		{"only marks", []string{"##PROGRESS## {}\n", "##PROGRESS## {}\n"}, ""},
		{"a hash line", []string{"#", "# comment\n"}, "## comment\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			term := &terminal{atStart: true, hideMark: true}
			var got strings.Builder
			for _, c := range tt.chunks {
				got.Write(term.dropMarks([]byte(c)))
			}
			if got.String() != tt.want {
				t.Errorf("got %q, want %q", got.String(), tt.want)
			}
		})
	}
}

func TestProgressLineETA(t *testing.T) {
	p := &api.Progress{Step: 5, Total: 10, ETASeconds: 30}
	if l := progressLineAt(p, 0); !strings.Contains(l, "eta 30s") {
		t.Errorf("fresh: %q", l)
	}
	if l := progressLineAt(p, 10*time.Second); !strings.Contains(l, "eta 20s") {
		t.Errorf("10 s later the ETA did not count down: %q", l)
	}
	if l := progressLineAt(p, time.Minute); strings.Contains(l, "eta") {
		t.Errorf("an ETA past due is shown: %q", l)
	}
	done := &api.Progress{Step: 10, Total: 10, ETASeconds: 3}
	if l := progressLineAt(done, 0); strings.Contains(l, "eta") || !strings.Contains(l, "10/10") {
		t.Errorf("a finished bar shows an ETA: %q", l)
	}
}
