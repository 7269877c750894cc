package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// terminal renders an attached run: output as written, runbox's own notes
// and setup output on stderr, and a one-line live progress display when
// stderr is a terminal. The line shows the progress of the output just
// printed (the daemon sends it right after that output), and is redrawn
// on a timer so that its ETA counts down between updates. The
// `##PROGRESS##` lines themselves are not echoed (the log keeps them;
// --progress-lines shows them). Without a terminal (CI logs, a pipe) the
// progress is written as a plain line now and then instead of a bar, and
// the summary says where the full log is.
type terminal struct {
	mu      sync.Mutex
	stdout  io.Writer
	stderr  io.Writer
	tty     bool
	line    string // progress line currently drawn
	midLine bool   // the last output did not end in a newline

	prog     *api.Progress // latest progress, and when it came
	progAt   time.Time
	hideMark bool          // drop ##PROGRESS## lines from stdout
	held     []byte        // the start of a stdout line that may be one
	atStart  bool          // stdout is at the start of a line
	stop     chan struct{} // ends the redraw timer

	inPrefixed map[client.Stream]bool // a prefixed stream is mid-line

	notes    bool          // without a terminal: progress as plain lines
	noteAt   time.Time     // when the last one was written
	noted    *api.Progress // what it said
	hidden   int           // ##PROGRESS## lines not echoed
	finished bool          // the last progress written was a finished bar
}

// noteEvery is how often, at most, a run without a terminal gets a plain
// progress line while its epoch and phase stay the same.
const noteEvery = 15 * time.Second

const progressMark = "##PROGRESS##"

func newTerminal(jsonMode, progressLines bool) *terminal {
	// The progress line is drawn on stderr and erased before output is
	// written; that only lines up when stdout is the same terminal (a pipe
	// delivers later, after the line was redrawn).
	tty := term.IsTerminal(int(os.Stderr.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	t := &terminal{stdout: os.Stdout, stderr: os.Stderr, tty: tty, atStart: true}
	if jsonMode {
		t.stdout = os.Stderr // stdout is reserved for the final JSON
		t.tty = false
	}
	t.hideMark = !progressLines
	t.notes = !t.tty && !jsonMode
	if t.tty {
		t.stop = make(chan struct{})
		go t.redraw(t.stop)
	}
	return t
}

// redraw refreshes the progress line (its ETA) until stop is closed.
func (t *terminal) redraw(stop chan struct{}) {
	tick := time.NewTicker(250 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			t.mu.Lock()
			if t.prog != nil {
				if l := progressLineAt(t.prog, time.Since(t.progAt)); l != t.line {
					t.eraseLocked()
					t.line = l
					t.drawLocked()
				}
			}
			t.mu.Unlock()
		}
	}
}

func (t *terminal) started(r *runEnd) {
	if t.tty {
		t.mu.Lock()
		fmt.Fprintf(t.stderr, "runbox: run %s (%s sandbox)\n", r.name(), r.Sandbox)
		t.mu.Unlock()
	}
}

func (t *terminal) output(s client.Stream, data []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.eraseLocked()
	switch s {
	case client.Stdout:
		if t.hideMark {
			data = t.dropMarks(data)
		}
		_, _ = t.stdout.Write(data)
	case client.Stderr:
		_, _ = t.stderr.Write(data)
	case client.SetupStdout, client.SetupStderr:
		t.prefixed(s, "setup | ", data)
	case api.StreamSmokeStdout, api.StreamSmokeStderr:
		t.prefixed(s, "smoke | ", data)
	case client.Meta:
		fmt.Fprintf(t.stderr, "runbox: %s", ensureNL(string(data)))
	}
	if len(data) > 0 {
		t.midLine = data[len(data)-1] != '\n'
	}
	t.drawLocked()
}

// prefixed writes data's lines to stderr, each behind prefix, a line that
// came in pieces behind one (per stream: stdout and stderr interleave).
func (t *terminal) prefixed(s client.Stream, prefix string, data []byte) {
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		if !t.inPrefixed[s] {
			fmt.Fprint(t.stderr, prefix)
		}
		fmt.Fprint(t.stderr, l)
		if t.inPrefixed == nil {
			t.inPrefixed = map[client.Stream]bool{}
		}
		t.inPrefixed[s] = !strings.HasSuffix(l, "\n")
	}
}

func ensureNL(s string) string {
	if strings.HasSuffix(s, "\n") {
		return s
	}
	return s + "\n"
}

func (t *terminal) progress(p *api.Progress) {
	if t.notes {
		t.note(p)
		return
	}
	if !t.tty {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.prog, t.progAt = p, time.Now()
	t.eraseLocked()
	t.line = progressLine(p)
	t.drawLocked()
}

// note writes progress as a plain line on stderr, for a log rather than a
// terminal: when the epoch or phase changes, when the bar fills, and
// otherwise at most every noteEvery.
func (t *terminal) note(p *api.Progress) {
	t.mu.Lock()
	defer t.mu.Unlock()
	done := p.Percentage >= 100 || (p.Total > 0 && p.Step >= p.Total)
	if prev := t.noted; prev != nil && p.Epoch == prev.Epoch && p.Phase == prev.Phase &&
		(done == t.finished) && time.Since(t.noteAt) < noteEvery {
		return
	}
	if t.midLine {
		fmt.Fprintln(t.stderr)
		t.midLine = false
	}
	fmt.Fprintf(t.stderr, "runbox: %s\n", progressLine(p))
	t.noted, t.noteAt, t.finished = p, time.Now(), done
}

// dropMarks returns stdout data without its ##PROGRESS## lines. The start
// of a line is held back only while what has arrived of it could still be
// one (or is one whose end has not arrived).
func (t *terminal) dropMarks(data []byte) []byte {
	var out []byte
	mark := []byte(progressMark)
	for len(data) > 0 {
		nl := bytes.IndexByte(data, '\n')
		seg := data
		if nl >= 0 {
			seg = data[:nl+1]
		}
		data = data[len(seg):]
		if !t.atStart && len(t.held) == 0 {
			out = append(out, seg...) // the rest of an ordinary line
			t.atStart = nl >= 0
			continue
		}
		line := append(t.held, seg...)
		t.held = nil
		switch {
		case bytes.HasPrefix(line, mark) && nl < 0, nl < 0 && bytes.HasPrefix(mark, line):
			t.held = line // a progress line without its end yet, or maybe one
		case bytes.HasPrefix(line, mark):
			t.hidden++ // a whole progress line: dropped
		default:
			out = append(out, line...)
		}
		t.atStart = nl >= 0
	}
	return out
}

// eraseLocked removes the progress line so output can be written.
func (t *terminal) eraseLocked() {
	if t.tty && t.line != "" && !t.midLine {
		fmt.Fprint(t.stderr, "\r\x1b[2K")
	}
}

func (t *terminal) drawLocked() {
	if t.tty && t.line != "" && !t.midLine {
		fmt.Fprint(t.stderr, "\x1b[2m"+t.line+"\x1b[0m")
	}
}

func (t *terminal) clear() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stop != nil {
		close(t.stop)
		t.stop = nil
	}
	if len(t.held) > 0 && !bytes.HasPrefix(t.held, []byte(progressMark)) {
		_, _ = t.stdout.Write(t.held) // the run ended mid-line
	}
	t.held = nil
	t.eraseLocked()
	t.line, t.prog = "", nil
}

// progressLine is the one-line summary of a progress state.
func progressLine(p *api.Progress) string { return progressLineAt(p, 0) }

// progressLineAt is progressLine for a state received age ago: its ETA has
// counted down meanwhile. A finished bar shows no ETA.
func progressLineAt(p *api.Progress, age time.Duration) string {
	var b strings.Builder
	b.WriteString("▶ ")
	if p.Phase != "" {
		b.WriteString(p.Phase + " ")
	}
	if p.EpochTotal > 0 {
		fmt.Fprintf(&b, "epoch %d/%d ", p.Epoch, p.EpochTotal)
	} else if p.Epoch > 0 {
		fmt.Fprintf(&b, "epoch %d ", p.Epoch)
	}
	pct := p.Percentage
	if pct == 0 && p.Total > 0 {
		pct = 100 * float64(p.Step) / float64(p.Total)
	}
	if p.Total > 0 {
		fmt.Fprintf(&b, "%s %3.0f%% %d/%d ", bar(pct, 20), pct, p.Step, p.Total)
	} else if pct > 0 {
		fmt.Fprintf(&b, "%s %3.0f%% ", bar(pct, 20), pct)
	} else if p.Step > 0 {
		fmt.Fprintf(&b, "step %d ", p.Step)
	}
	if p.Rate > 0 {
		fmt.Fprintf(&b, "%s %s ", fmtFloat(p.Rate), p.RateUnit)
	}
	finished := pct >= 100 || (p.Total > 0 && p.Step >= p.Total)
	if eta := time.Duration(p.ETASeconds*float64(time.Second)) - age; eta > 0 && !finished {
		fmt.Fprintf(&b, "eta %s ", eta.Round(time.Second).String())
	}
	for _, k := range sortedKeys(p.Metrics) {
		fmt.Fprintf(&b, "%s=%s ", k, fmtFloat(p.Metrics[k]))
	}
	line := strings.TrimSpace(b.String())
	if w, _, err := term.GetSize(int(os.Stderr.Fd())); err == nil && w > 10 && len([]rune(line)) > w-1 {
		line = string([]rune(line)[:w-1])
	}
	return line
}

func bar(pct float64, width int) string {
	n := int(pct / 100 * float64(width))
	n = max(0, min(width, n))
	return "[" + strings.Repeat("█", n) + strings.Repeat("·", width-n) + "]"
}

// summary tells how an attached run ended, on stderr.
func (t *terminal) summary(r *runEnd) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.midLine {
		fmt.Fprintln(t.stderr)
	}
	if t.notes && t.hidden > 0 {
		fmt.Fprintf(t.stderr, "runbox: %d ##PROGRESS## line(s) not shown; the full output: runbox logs %s\n", t.hidden, r.name())
	}
	if r.State == api.Succeeded {
		if t.tty {
			fmt.Fprintf(t.stderr, "runbox: run %s succeeded in %s\n", r.name(), runDuration(&api.Run{StartedAt: r.StartedAt, EndedAt: r.EndedAt, Exit: r.Exit}))
		}
		return
	}
	fmt.Fprintf(t.stderr, "runbox: run %s %s", r.name(), r.State)
	if r.Failure != nil {
		fmt.Fprintf(t.stderr, ": %s — %s", r.Failure.Code, r.Failure.Message)
	}
	fmt.Fprintln(t.stderr)
	if r.Failure != nil {
		for _, s := range r.Failure.Suggestions {
			fmt.Fprintf(t.stderr, "  • %s\n", s)
		}
	}
}

// runDuration is how long a run ran, the same wherever it is shown (ls,
// status, the end of an attached run): the sandbox's own wall time when it
// measured one, else from start to end, or to now while it runs.
func runDuration(r *api.Run) string {
	if r.Exit != nil && r.Exit.Usage.WallSeconds > 0 {
		return (time.Duration(r.Exit.Usage.WallSeconds * float64(time.Second))).Round(time.Millisecond).String()
	}
	if r.StartedAt == nil {
		return "-"
	}
	end := time.Now()
	if r.EndedAt != nil {
		end = *r.EndedAt
	}
	return end.Sub(*r.StartedAt).Round(time.Millisecond).String()
}

func absPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("path %s: %w", p, err)
	}
	return abs, nil
}

func baseName(p string) string { return filepath.Base(p) }
