package classify

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/builtin/classify/internal/phrases"
	"github.com/runbox/runbox/sdk"
)

// A matcher only sees lines that hold one of its gates, so a phrase with
// no gate in it could never fire ("job exceeded maximum time" behind the
// gates "timeout"/"execution time"/"deadline"). The gates are therefore
// derived from the matchers' source (internal/phrases, written to
// gates_gen.go): the generated file must be current, and every phrase a
// case tests first must hold one of its matcher's gates.
func TestEveryPhraseCanFire(t *testing.T) {
	d, err := phrases.Derive(".")
	if err != nil {
		t.Fatal(err)
	}
	want, err := phrases.Source("classify", d)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("gates_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("gates_gen.go is stale: run `go run ./internal/gengates` in plugins/builtin/classify")
	}
	byName := map[string]matcher{}
	for _, m := range matchers {
		byName[m.name] = m
	}
	checked := 0
	for name, ps := range d {
		m, ok := byName[name]
		if !ok {
			t.Errorf("%s is not in matchers: its phrases are never tried", name)
			continue
		}
		for _, p := range ps {
			checked++
			if !has(p, m.gates...) {
				t.Errorf("%s: phrase %q holds none of the matcher's gates, so it can never fire", name, p)
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d phrases checked: the derivation no longer reads the matchers", checked)
	}
}

// The examples the issue named: they reach their matchers now.
func TestNamedPhrasesReachTheirMatcher(t *testing.T) {
	for _, tc := range []struct{ line, matcher string }{
		{"error: job exceeded maximum time of 360 minutes", "matchTimeout"},
		{"urllib.error.httperror: http error 403: 403 forbidden", "matchNetwork"},
		{"requests.exceptions.httperror: 403 forbidden for url", "matchNetwork"},
	} {
		mask := gateMask(tc.line)
		found := false
		for k, m := range matchers {
			if m.name == tc.matcher && mask&(1<<k) != 0 {
				found = true
			}
		}
		if !found {
			t.Errorf("%q does not pass %s's gates", tc.line, tc.matcher)
		}
	}
}

// The signature table is data the engine trusts: every code is a code,
// every phrase is lowercase and long enough to be a gate, and every group
// of With is not empty (an empty group would never match).
func TestSignaturesAreWellFormed(t *testing.T) {
	names := map[string]bool{}
	for _, s := range signatures {
		if names[s.Name] || s.Name == "" {
			t.Errorf("signature %q: name empty or used twice", s.Name)
		}
		names[s.Name] = true
		if !sdk.ValidCode(s.Code) {
			t.Errorf("%s: %q is not a failure code", s.Name, s.Code)
		}
		if len(s.Phrases) == 0 || s.Message == "" || len(s.Suggest) == 0 || s.Conf <= 0 || s.Conf > 1 {
			t.Errorf("%s: phrases, message, suggestions and a confidence in (0,1] are required", s.Name)
		}
		for _, p := range s.Phrases {
			if len(p) < 3 || p != strings.ToLower(p) {
				t.Errorf("%s: phrase %q must be lowercase and 3 bytes or more", s.Name, p)
			}
		}
		for _, g := range s.With {
			if len(g) == 0 {
				t.Errorf("%s: an empty With group never matches", s.Name)
			}
		}
	}
}
