package jsonfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWriteRead(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "r.json")
	type rec struct{ A int }
	for _, durable := range []bool{false, true} {
		var err error
		if durable {
			err = WriteDurable(path, rec{A: 2})
		} else {
			err = Write(path, rec{A: 1}, false)
		}
		if err != nil {
			t.Fatal(err)
		}
		var got rec
		if err := Read(path, &got); err != nil {
			t.Fatal(err)
		}
		if want := map[bool]int{false: 1, true: 2}[durable]; got.A != want {
			t.Errorf("read %d, want %d", got.A, want)
		}
		if st, _ := os.Stat(path); st.Mode().Perm() != Mode {
			t.Errorf("mode %v", st.Mode().Perm())
		}
		if _, err := os.Stat(path + TmpSuffix); !os.IsNotExist(err) {
			t.Errorf("temporary twin left behind: %v", err)
		}
	}
	// A write that is never committed leaves the old record whole.
	if _, err := WriteTemp(path, []byte(`{"A": 9`), false); err != nil {
		t.Fatal(err)
	}
	var got rec
	if err := Read(path, &got); err != nil || got.A != 2 {
		t.Errorf("after an uncommitted write: %v %+v", err, got)
	}
	if err := os.WriteFile(path, []byte("{torn"), Mode); err != nil {
		t.Fatal(err)
	}
	if err := Read(path, &got); err == nil {
		t.Error("a torn record decoded")
	}
}
