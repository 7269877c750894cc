package progress

import (
	"strings"
	"testing"
)

// Every format entry is bound to a reader or says which entry reads it,
// and every reader has an entry: the table and the code cannot part.
func TestFormatsHaveReaders(t *testing.T) {
	names := map[string]bool{}
	for _, f := range formats {
		if names[f.name] {
			t.Errorf("format %q twice", f.name)
		}
		names[f.name] = true
		if f.fields == "" {
			t.Errorf("format %q does not say what its fields mean", f.name)
		}
		if _, ok := readers[f.name]; !ok {
			// read by another entry: its fields must name which
			read := false
			for other := range readers {
				read = read || strings.Contains(f.fields, other+" entry") || strings.Contains(f.fields, "through the "+other)
			}
			if !read {
				t.Errorf("format %q has no reader and names none that reads it", f.name)
			}
		}
	}
	for name := range readers {
		if !names[name] {
			t.Errorf("reader %q has no format entry", name)
		}
	}
	if last := bound[len(bound)-1]; !last.final || last.gate != nil || last.need != 0 {
		t.Error("the last reader must take every line the others leave")
	}
}

// Every confirm pattern narrows a literal some entry declares: a pattern
// for a literal no entry sends would never run.
func TestConfirmLiteralsDeclared(t *testing.T) {
	for _, c := range PrefilterConfirm {
		found := false
		for _, l := range Prefilter {
			found = found || l == c.Literal
		}
		if !found {
			t.Errorf("confirm entry %+v narrows a literal no format declares", c)
		}
	}
}
