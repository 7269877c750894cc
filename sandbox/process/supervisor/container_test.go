package supervisor

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestReleaseOnlyToAWaitingInit: the hand-over FIFO of a pooled
// container's box can be written only while an init holds it (so a dead
// container is noticed, not handed a run), and carries "go".
func TestReleaseOnlyToAWaitingInit(t *testing.T) {
	box := t.TempDir()
	if err := MakeCtl(box, 0o600); err != nil {
		t.Fatal(err)
	}
	if Waiting(box) {
		t.Fatal("Waiting with no reader")
	}
	if err := Release(box); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("Release with no reader: %v, want ErrNotWaiting", err)
	}
	// What awaitBox does: hold the FIFO read-write, read one line.
	r, err := os.OpenFile(filepath.Join(box, CtlFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !Waiting(box) {
		t.Fatal("not Waiting with a reader")
	}
	if err := Release(box); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(r).ReadString('\n')
	if err != nil || line != "go\n" {
		t.Fatalf("read %q, %v", line, err)
	}
	r.Close()
	if err := Release(box); !errors.Is(err, ErrNotWaiting) {
		t.Fatalf("Release after the init took its run: %v", err)
	}
}

// TestAwaitGivesUp: a pooled init never handed a run exits by itself
// after its MAXWAIT (its daemon died), serving nothing.
func TestAwaitGivesUp(t *testing.T) {
	box := t.TempDir()
	if err := MakeCtl(box, 0o600); err != nil {
		t.Fatal(err)
	}
	sigs := make(chan os.Signal, 1)
	if code := awaitBox(sigs, []string{box, "50ms"}); code != 0 {
		t.Errorf("code %d", code)
	}
	if _, err := os.Stat(filepath.Join(box, "exit.json")); err == nil {
		t.Error("an exit record for a run never given")
	}
}
