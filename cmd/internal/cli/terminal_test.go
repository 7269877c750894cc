package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
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

// Without a terminal (a CI log), an attached run's ##PROGRESS## lines are
// not echoed; progress is a plain line when the epoch changes and when
// the bar fills, not once per update; the summary says where the full
// output is.
func TestNotesWithoutTerminal(t *testing.T) {
	var out, errb strings.Builder
	term := &terminal{stdout: &out, stderr: &errb, atStart: true, hideMark: true, notes: true}
	term.started(&runEnd{ID: "01kfull", ShortID: "7", Sandbox: "process"})
	for step := 1; step <= 6; step++ {
		term.output(client.Stdout, []byte("work\n##PROGRESS## {\"step\": 1}\n"))
		term.progress(&api.Progress{Step: int64(step), Total: 6, Epoch: int64((step + 2) / 3), EpochTotal: 2})
	}
	term.clear()
	term.summary(&runEnd{ID: "01kfull", ShortID: "7", State: api.Succeeded})
	if strings.Contains(out.String()+errb.String(), "##PROGRESS## {") {
		t.Errorf("a ##PROGRESS## line was echoed:\n%s\n%s", out.String(), errb.String())
	}
	if n := strings.Count(out.String(), "work\n"); n != 6 {
		t.Errorf("%d output lines, want 6:\n%s", n, out.String())
	}
	notes := strings.Count(errb.String(), "runbox: ▶ ")
	// epoch 1 starts, epoch 2 starts, the bar fills.
	if notes != 3 || !strings.Contains(errb.String(), "epoch 2/2") || !strings.Contains(errb.String(), "6/6") {
		t.Errorf("%d progress notes, want 3:\n%s", notes, errb.String())
	}
	if !strings.Contains(errb.String(), "6 ##PROGRESS## line(s) not shown; the full output: runbox logs 7") {
		t.Errorf("the summary does not say where the full log is:\n%s", errb.String())
	}
}

func TestIsolationLevels(t *testing.T) {
	tests := []struct{ info, can, cannot string }{
		{"full", "none, net, fs, full", ""},
		{"fs at most (no network isolation: user namespaces off)", "none, fs", "net, full (no network isolation: user namespaces off)"},
		{"net at most (no filesystem isolation: no Landlock)", "none, net", "fs, full (no filesystem isolation: no Landlock)"},
		{"none at most (a; b)", "none", "net, fs, full (a; b)"},
		{"stronger", "stronger", ""},
	}
	for _, tt := range tests {
		can, cannot := isolationLevels(tt.info)
		if can != tt.can || cannot != tt.cannot {
			t.Errorf("isolationLevels(%q) = %q, %q; want %q, %q", tt.info, can, cannot, tt.can, tt.cannot)
		}
	}
}

// --progress-lines echoes the ##PROGRESS## lines without a terminal too,
// and then the summary has nothing to point at.
func TestProgressLinesFlagWithoutTerminal(t *testing.T) {
	var out, errb strings.Builder
	term := newTerminal(false, true)
	term.stdout, term.stderr, term.tty = &out, &errb, false
	term.output(client.Stdout, []byte("work\n##PROGRESS## {\"step\": 1}\n"))
	term.clear()
	term.summary(&runEnd{ID: "01kfull", ShortID: "7", State: api.Succeeded})
	if out.String() != "work\n##PROGRESS## {\"step\": 1}\n" || strings.Contains(errb.String(), "not shown") {
		t.Errorf("stdout %q, stderr %q: want the progress line echoed and no note", out.String(), errb.String())
	}
}
