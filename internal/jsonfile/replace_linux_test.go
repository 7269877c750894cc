package jsonfile

import (
	"os"
	"path/filepath"
	"testing"
)

// Replace rewrites a record without ever freeing a file: the two files
// take turns (the old record's file becomes the twin, then the record
// again), readers always see a whole record, and the twin is left empty.
func TestReplaceKeepsItsTwoFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tree.json")
	stat := func(p string) os.FileInfo {
		t.Helper()
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	read := func() int {
		t.Helper()
		var v struct{ N int }
		if err := Read(path, &v); err != nil {
			t.Fatal(err)
		}
		return v.N
	}
	if err := Replace(path, struct{ N int }{1}); err != nil {
		t.Fatal(err)
	}
	first := stat(path)
	if read() != 1 {
		t.Fatal("first record not read back")
	}
	if err := Replace(path, struct{ N int }{2}); err != nil {
		t.Fatal(err)
	}
	second := stat(path)
	if read() != 2 {
		t.Fatal("second record not read back")
	}
	twin := stat(path + TmpSuffix)
	if !os.SameFile(first, twin) {
		t.Fatal("the first record's file was not kept as the twin")
	}
	if twin.Size() != 0 {
		t.Fatalf("the twin holds %d bytes of the old record, want none", twin.Size())
	}
	if err := Replace(path, struct{ N int }{3}); err != nil {
		t.Fatal(err)
	}
	if read() != 3 || !os.SameFile(stat(path), first) || !os.SameFile(stat(path+TmpSuffix), second) {
		t.Fatal("the third write did not reuse the twin")
	}
	if st := stat(path); st.Mode().Perm() != Mode {
		t.Fatalf("mode %v, want %v", st.Mode().Perm(), os.FileMode(Mode))
	}
}
