package protocol

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// The record the supervisor says is the record the handle reads back.
func TestExitedRoundTrip(t *testing.T) {
	want := sandbox.Exit{Code: 3, Signal: "SIGTERM", Cancelled: true, Error: "a\nb",
		StartedAt: time.Unix(1, 2).UTC(), EndedAt: time.Unix(3, 4).UTC()}
	rec, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	msg, ok := Exited(rec)
	if !ok {
		t.Fatalf("Exited(%s) refused a one-line record", rec)
	}
	got, ok := ParseExited(string(msg))
	if !ok || got == nil {
		t.Fatalf("ParseExited(%q) = %v, %v", msg, got, ok)
	}
	if b, _ := json.Marshal(got); string(b) != string(rec) {
		t.Errorf("round trip gave %s, want %s", b, rec)
	}
}

func TestExitedRefusesWhatCannotGoOnOneLine(t *testing.T) {
	for _, rec := range []string{"", "{\n}"} {
		if msg, ok := Exited([]byte(rec)); ok {
			t.Errorf("Exited(%q) = %q, want refused", rec, msg)
		}
	}
}

func TestParseExited(t *testing.T) {
	tests := []struct {
		msg      string
		ok       bool
		withExit bool
	}{
		{ExitedMsg, true, false},
		{"exited {\"code\":2}\n", true, true},
		{"exited not-json\n", true, false}, // the record on disk is the one to read
		{"exited {\"code\":2}", false, false},
		{"exitedx\n", false, false},
		{ReadyMsg, false, false},
		{IdleMsg, false, false},
		{"", false, false},
	}
	for _, tt := range tests {
		e, ok := ParseExited(tt.msg)
		if ok != tt.ok || (e != nil) != tt.withExit {
			t.Errorf("ParseExited(%q) = %v, %v; want ok %v, record %v", tt.msg, e, ok, tt.ok, tt.withExit)
		}
	}
	if e, _ := ParseExited("exited {\"code\":2}\n"); e == nil || e.Code != 2 {
		t.Errorf("record %+v, want code 2", e)
	}
}

func TestRunMsg(t *testing.T) {
	tests := []struct {
		line string
		dir  string
		ok   bool
	}{
		{RunMsg("/s/run 1"), "/s/run 1", true},
		{"/s/run", "", false}, // EOF before the newline: the starter went away
		{"\n", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		dir, ok := ParseRunMsg(tt.line)
		if dir != tt.dir || ok != tt.ok {
			t.Errorf("ParseRunMsg(%q) = %q, %v; want %q, %v", tt.line, dir, ok, tt.dir, tt.ok)
		}
	}
}

func TestJSONFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := ReadExit(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("ReadExit of an empty dir: %v, want ErrNotExist", err)
	}
	path := filepath.Join(dir, ExitFile)
	if err := WriteJSON(path, sandbox.Exit{Code: 7}, true); err != nil {
		t.Fatal(err)
	}
	e, err := ReadExit(dir)
	if err != nil || e.Code != 7 {
		t.Fatalf("ReadExit = %+v, %v", e, err)
	}
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != SecretMode {
		t.Errorf("mode %v (%v), want %v", st.Mode().Perm(), err, os.FileMode(SecretMode))
	}
	if Exists(path + tmpSuffix) {
		t.Error("temporary file left behind")
	}
	// Until commit, readers see the old file whole.
	commit, err := WriteTemp(path, []byte(`{"code":8}`), false)
	if err != nil {
		t.Fatal(err)
	}
	if e, _ := ReadExit(dir); e.Code != 7 {
		t.Errorf("before commit: code %d, want 7", e.Code)
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	if e, _ := ReadExit(dir); e.Code != 8 {
		t.Errorf("after commit: code %d, want 8", e.Code)
	}
	if err := os.WriteFile(path, []byte("{"), SecretMode); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadExit(dir); err == nil || errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadExit of a torn record: %v, want a decode error", err)
	}
}

// A spec is there until a supervisor takes it; taken, it is emptied (its
// env may hold secrets) and reads as none.
func TestSpecTakenIsEmptied(t *testing.T) {
	dir := t.TempDir()
	var b Boot
	if err := ReadSpec(dir, &b); !errors.Is(err, os.ErrNotExist) || HasSpec(dir) {
		t.Fatalf("no spec: %v, HasSpec %v", err, HasSpec(dir))
	}
	if err := WriteJSON(filepath.Join(dir, SpecFile), Boot{Spec: sandbox.Spec{RunID: "r1", Env: []string{"TOKEN=s3cret"}}}, false); err != nil {
		t.Fatal(err)
	}
	if err := ReadSpec(dir, &b); err != nil || b.Spec.RunID != "r1" || !HasSpec(dir) {
		t.Fatalf("written: %+v, %v", b, err)
	}
	DropSpec(dir)
	data, err := os.ReadFile(filepath.Join(dir, SpecFile))
	if err != nil || len(data) != 0 {
		t.Fatalf("taken: %q, %v (want the file kept, empty)", data, err)
	}
	if err := ReadSpec(dir, &b); !errors.Is(err, os.ErrNotExist) || HasSpec(dir) {
		t.Fatalf("taken: %v, HasSpec %v", err, HasSpec(dir))
	}
	DropSpec(t.TempDir()) // none: nothing to do, nothing made
}
