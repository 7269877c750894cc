package docker

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// These tests need no daemon.

func TestCursorResume(t *testing.T) {
	c := &cursor{}
	if from, skip := c.resume(); from != 0 || skip != 0 {
		t.Fatalf("empty cursor resumes at %d/%d", from, skip)
	}
	base := time.Now().UnixNano()
	// Out of order and repeated timestamps, as the driver produces them.
	for _, d := range []time.Duration{0, 20 * time.Second, 25 * time.Second, 25 * time.Second, 24 * time.Second} {
		c.add(base + int64(d))
	}
	from, skip := c.resume()
	if want := base + int64(25*time.Second-window); from != want || skip != 4 {
		t.Errorf("resume = %d, %d; want %d, 4", from, skip, want)
	}
}

func TestCursorFromLogSkipsPatches(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	w, err := runlog.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	c := &cursor{}
	ts := time.Unix(100, 0)
	full := []byte(strings.Repeat("a", partialSize))
	// A split line whose last part lost its newline, then another line.
	c.write(w, runlog.Stdout, ts, full)
	c.write(w, runlog.Stdout, ts, []byte("rest"))
	w.Write(runlog.Meta, []byte("note\n"))
	c.write(w, runlog.Stderr, ts.Add(time.Millisecond), []byte("err\n"))
	c.write(w, runlog.Stdout, ts.Add(time.Second), []byte("next\n"))
	c.write(w, runlog.Stdout, ts.Add(2*time.Second), []byte("tail"))
	w.Close()

	got, err := cursorFromLog(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.recent) != 5 || got.max != c.max {
		t.Errorf("rebuilt cursor counts %d messages (max %d), want 5 (max %d)", len(got.recent), got.max, c.max)
	}
	if !got.tails[runlog.Stdout].cand || got.tails[runlog.Stdout].split {
		t.Errorf("stdout tail %+v, want an unsplit candidate", got.tails[runlog.Stdout])
	}
	var out strings.Builder
	runlog.ReadAll(path, func(r runlog.Record) error {
		if r.Stream == runlog.Stdout {
			out.Write(r.Data)
		}
		return nil
	})
	if want := string(full) + "rest\nnext\ntail"; out.String() != want {
		t.Errorf("stdout ends %q", tailOf(out.String()))
	}
}

func TestSplitTimestamp(t *testing.T) {
	ts, data, err := splitTimestamp([]byte("2024-05-01T10:00:00.123456789Z hello \xff\n"))
	if err != nil || ts.UnixNano()%1e9 != 123456789 || string(data) != "hello \xff\n" {
		t.Errorf("got %v %q %v", ts, data, err)
	}
	if _, _, err := splitTimestamp([]byte("nospace")); err == nil {
		t.Error("no error for a message without timestamp")
	}
}

func TestSignalName(t *testing.T) {
	for code, want := range map[int]string{0: "", 1: "", 128: "", 130: "SIGINT", 137: "SIGKILL", 139: "SIGSEGV", 143: "SIGTERM", 255: ""} {
		if got := signalName(code); got != want {
			t.Errorf("signalName(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestGPURequest(t *testing.T) {
	for in, want := range map[string]string{"all": "-1 []", "2": "2 []", "device=0,1": "0 [0 1]"} {
		r, err := gpuRequest(in)
		if err != nil || fmt.Sprint(r.Count, r.DeviceIDs) != want {
			t.Errorf("gpuRequest(%q) = %v %v, want %s", in, r, err, want)
		}
	}
	if _, err := gpuRequest("lots"); err == nil {
		t.Error("no error for a bad gpus value")
	}
}

func TestBuildPlanRejects(t *testing.T) {
	ws := t.TempDir()
	ok := sandbox.Spec{RunID: "r", Command: []string{"true"}, Workdir: ws}
	for name, mod := range map[string]func(*sandbox.Spec){
		"no command":    func(s *sandbox.Spec) { s.Command = nil },
		"no workdir":    func(s *sandbox.Spec) { s.Workdir = "" },
		"bad user":      func(s *sandbox.Spec) { s.User = "alice" },
		"bad network":   func(s *sandbox.Spec) { s.Network = "overlay" },
		"asset escapes": func(s *sandbox.Spec) { s.Assets = []sandbox.Asset{{Src: ws, Dst: "../x"}} },
		"two stdins":    func(s *sandbox.Spec) { s.Stdin, s.StdinFile = []byte("x"), "/dev/null" },
	} {
		s := ok
		mod(&s)
		if _, err := buildPlan(s, "img", nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	p, err := buildPlan(ok, "img", []string{"/entry"})
	if err != nil || p.gated || p.stdin || len(p.config.Entrypoint) != 0 {
		t.Errorf("plain plan: %+v %v", p, err)
	}
	ok.Setup = []string{"true"}
	p, err = buildPlan(ok, "img", []string{"/entry"})
	if err != nil || !p.gated || !p.stdin || p.config.Entrypoint[len(p.config.Entrypoint)-1] != "/entry" {
		t.Errorf("gated plan: %+v %v", p, err)
	}
}
