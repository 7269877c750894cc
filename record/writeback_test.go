package record

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// What a snapshot run's end copies back, case by case: the run's new and
// changed files come back; the user's edits since the submission, a name
// the user took meanwhile and a file the user removed are left alone and
// named; a link the run made is never followed.
func TestWriteBack(t *testing.T) {
	work := t.TempDir()
	write(t, work, "train.py", "v1\n")
	write(t, work, "log.txt", "old\n")
	write(t, work, "notes.txt", "mine\n")
	write(t, work, "gone.txt", "x\n")
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("secret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "snap")
	if _, err := TakeSnapshot(context.Background(), work, dest, ""); err != nil {
		t.Fatal(err)
	}
	// The run: a new file, changes to three copied files, a link out.
	write(t, dest, "out/model.txt", "result\n")
	write(t, dest, "log.txt", "old\nappended\n")
	write(t, dest, "notes.txt", "mine\nrun\n")
	write(t, dest, "gone.txt", "y\n")
	write(t, dest, "taken.txt", "run's\n")
	if err := os.Symlink(secret, filepath.Join(dest, "leak.txt")); err != nil {
		t.Fatal(err)
	}
	// The user, meanwhile.
	write(t, work, "notes.txt", "mine, edited\n")
	write(t, work, "taken.txt", "user's\n")
	os.Remove(filepath.Join(work, "gone.txt"))

	returned, skipped, err := WriteBack(context.Background(), dest, work)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"log.txt", filepath.Join("out", "model.txt")}; !slices.Equal(returned, want) {
		t.Fatalf("returned %v, want %v", returned, want)
	}
	for _, c := range []struct{ name, want string }{
		{"out/model.txt", "result\n"}, {"log.txt", "old\nappended\n"}, {"notes.txt", "mine, edited\n"},
		{"taken.txt", "user's\n"}, {"train.py", "v1\n"},
	} {
		if b, _ := os.ReadFile(filepath.Join(work, c.name)); string(b) != c.want {
			t.Errorf("%s in the workspace: %q, want %q", c.name, b, c.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(work, "gone.txt")); !os.IsNotExist(err) {
		t.Errorf("a file the user removed came back: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(work, "leak.txt")); !os.IsNotExist(err) {
		t.Errorf("the run's link out was copied back: %v", err)
	}
	slices.Sort(skipped)
	want := []string{"gone.txt (removed", "notes.txt (changed", "taken.txt (the workspace has a file"}
	if len(skipped) != len(want) {
		t.Fatalf("skipped %q", skipped)
	}
	for i, w := range want {
		if !strings.HasPrefix(skipped[i], w) {
			t.Errorf("skipped %q, want it to start %q", skipped[i], w)
		}
	}
	// The same link read without WriteBack's care reaches its target:
	// the attack is real.
	if b, err := os.ReadFile(filepath.Join(dest, "leak.txt")); err != nil || string(b) != "secret\n" {
		t.Fatalf("the link does not reach its target unconfined: %q %v", b, err)
	}
}

// A workspace removed while the run ran is not made again for the run's
// outputs (it was: a directory holding only result.txt, where the user
// had removed the project); each output is named as not copied back.
func TestWriteBackIntoAWorkspaceThatIsGone(t *testing.T) {
	work := filepath.Join(t.TempDir(), "project")
	write(t, work, "train.py", "v1\n")
	dest := filepath.Join(t.TempDir(), "snap")
	if _, err := TakeSnapshot(context.Background(), work, dest, ""); err != nil {
		t.Fatal(err)
	}
	write(t, dest, "result.txt", "done\n")
	write(t, dest, "train.py", "v2\n")
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	returned, skipped, err := WriteBack(context.Background(), dest, work)
	if err != nil {
		t.Fatal(err)
	}
	if len(returned) != 0 || len(skipped) != 2 {
		t.Fatalf("returned %q, skipped %q", returned, skipped)
	}
	for _, s := range skipped {
		if !strings.Contains(s, "the workspace "+work+" is gone") {
			t.Errorf("skipped %q: does not say the workspace is gone", s)
		}
	}
	if _, err := os.Stat(work); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the removed workspace was made again: %v", err)
	}
}

// New paths in the workspace are linked into an older copy; the copied
// files stay as they were.
func TestLinkNew(t *testing.T) {
	work := t.TempDir()
	write(t, work, "job.sh", "v1\n")
	dest := filepath.Join(t.TempDir(), "snap")
	if _, err := TakeSnapshot(context.Background(), work, dest, ""); err != nil {
		t.Fatal(err)
	}
	write(t, work, "job.sh", "v2\n")
	write(t, work, "out/model.txt", "from an earlier run\n")
	linked, err := LinkNew(dest)
	if err != nil || !slices.Equal(linked, []string{"out"}) {
		t.Fatalf("linked %v %v", linked, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "out", "model.txt")); string(b) != "from an earlier run\n" {
		t.Errorf("the new output through the copy: %q", b)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "job.sh")); string(b) != "v1\n" {
		t.Errorf("the copied script changed: %q", b)
	}
}

// A copy of a snapshot (a sweep member's, made from the sweep's as it
// starts) is the snapshot's twin: same files, modes and times, links as
// they were (the left-in-place path still points into the workspace),
// its own stamps; a run's changes in it come back, the user's edits to
// the workspace win, and the snapshot it came from stays as taken.
func TestCopySnapshot(t *testing.T) {
	work := t.TempDir()
	write(t, work, "train.py", "v1\n")
	write(t, work, "log.txt", "old\n")
	write(t, work, "notes.txt", "mine\n")
	if err := os.Chmod(filepath.Join(work, "train.py"), 0o750); err != nil {
		t.Fatal(err)
	}
	big := filepath.Join(work, "data.bin")
	if err := os.WriteFile(big, make([]byte, MaxSnapshotFile+1), 0o644); err != nil {
		t.Fatal(err)
	}
	shared := filepath.Join(t.TempDir(), "sweep")
	if _, err := TakeSnapshot(context.Background(), work, shared, ""); err != nil {
		t.Fatal(err)
	}
	member := filepath.Join(t.TempDir(), "member")
	if err := CopySnapshot(shared, member); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"train.py", "log.txt", "notes.txt"} {
		a, _ := os.Stat(filepath.Join(shared, name))
		b, err := os.Stat(filepath.Join(member, name))
		if err != nil || a.Mode() != b.Mode() || !a.ModTime().Equal(b.ModTime()) || a.Size() != b.Size() {
			t.Errorf("%s: copy %v %v, snapshot %v", name, b, err, a)
		}
	}
	if l, err := os.Readlink(filepath.Join(member, "data.bin")); err != nil || l != big {
		t.Errorf("the large file's link in the copy: %q %v, want %q", l, err, big)
	}
	// The run, and the user meanwhile.
	write(t, member, "log.txt", "old\nappended\n")
	write(t, member, "notes.txt", "mine\nrun\n")
	write(t, work, "notes.txt", "mine, edited\n")
	returned, skipped, err := WriteBack(context.Background(), member, work)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(returned, []string{"log.txt"}) || len(skipped) != 1 || !strings.HasPrefix(skipped[0], "notes.txt (changed") {
		t.Fatalf("returned %v, skipped %q", returned, skipped)
	}
	if b, _ := os.ReadFile(filepath.Join(shared, "log.txt")); string(b) != "old\n" {
		t.Errorf("the snapshot the copy came from changed: %q", b)
	}
	// A snapshot without its stamps (removed) is not copied.
	if err := CopySnapshot(filepath.Join(t.TempDir(), "none"), filepath.Join(t.TempDir(), "x")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("copy of no snapshot: %v", err)
	}
}
