package cclassifier_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/runbox/runbox/sdk"
)

// FuzzClassify: any bytes as the whole input, and any text as a stderr
// tail, get a valid envelope in valid UTF-8, never a trap. The rules'
// needles are seeds, so that the fuzzer mutates around the lines they
// match, where the slicing is. Go's coverage guidance does not see inside
// the wasm module, so the mutator is blind to the C's branches: this finds
// what random mutation of those seeds finds, no more.
func FuzzClassify(f *testing.F) {
	g := newGuest(f, filepath.Join(buildPlugin(f), "r-julia.wasm"))
	inputs, _ := filepath.Glob("testdata/*.input.json")
	for _, p := range inputs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, "")
	}
	for _, s := range []string{
		"cannot allocate vector of size ", "OutOfMemoryError()", "there is no package called \u2018x\u2019",
		"there is no package called '", "ArgumentError: Package  not found in current path",
		"cannot open file 'a': No such file or directory", "SystemError: opening file \"", "Error: unexpected ",
		"LoadError: syntax: ", "ERROR: ParseError:", "\xe2\x80\x98\n\xe2\x80",
	} {
		f.Add([]byte(`{"stderr_tail": "`+s+`"}`), s)
	}
	ctx := context.Background()
	check := func(t *testing.T, in []byte) {
		out, err := g.classify(ctx, in)
		if err != nil {
			t.Fatalf("input %q: %v", in, err)
		}
		var env sdk.Envelope
		if !utf8.ValidString(out) || json.Unmarshal([]byte(out), &env) != nil || (env.Error == "") == (env.Result == nil) {
			t.Fatalf("input %q: answer %q is no envelope", in, out)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, tail string) {
		check(t, raw)
		in, err := json.Marshal(map[string]any{"exit_code": 1, "stderr_tail": tail, "stdout_tail": tail})
		if err != nil {
			t.Fatal(err)
		}
		check(t, in)
	})
}
