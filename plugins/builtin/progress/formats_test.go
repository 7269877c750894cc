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
		r, ok := readers[f.name]
		switch {
		case len(f.decl) > 0:
			// data: one generic reader; readers may hold its gate only
			if ok && r.read != nil {
				t.Errorf("format %q is data and code at once", f.name)
			}
			for i := range f.decl {
				e := f.decl[i]
				if err := e.Compile(); err != nil {
					t.Errorf("format %q: entry %q: %v", f.name, e.Name, err)
				}
			}
		case ok && r.read == nil:
			t.Errorf("format %q has a gate but neither data nor a reader", f.name)
		}
		if !ok && len(f.decl) == 0 {
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
