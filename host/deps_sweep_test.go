package host

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/store"
)

// A run cancelled because its dependency failed names the dependency by
// its run number, as the waiting reason does ("waiting for 12"), whether
// the dependency ended while the run waited or before it was submitted.
func TestCancelledDependencyIsNamedByNumber(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	ctx := context.Background()
	submit := func(req api.RunRequest) *store.Run {
		t.Helper()
		r, err := te.Submit(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	slow := submit(processRequest(t, "sh", "-c", "sleep 0.5; exit 3"))
	waiting := processRequest(t, "true")
	waiting.After = []string{slow.ID}
	w := submit(waiting)
	te.wait(t, slow.ID)
	late := processRequest(t, "true")
	late.After = []string{slow.ID}
	l := submit(late)
	for _, id := range []string{w.ID, l.ID} {
		r := te.wait(t, id)
		want := "dependency " + slow.Short + " failed"
		if r.State != store.Cancelled || !strings.Contains(r.Reason, want) || strings.Contains(r.Reason, slow.ID) {
			t.Errorf("run %s: %s, reason %q, want it to contain %q", id, r.State, r.Reason, want)
		}
	}
}

// --after "" (or a list with an empty name) names no run: refused, not a
// run with no dependency.
func TestAfterEmptyIsRefused(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 4)
	dep, err := te.Submit(context.Background(), processRequest(t, "true"))
	if err != nil {
		t.Fatal(err)
	}
	te.wait(t, dep.ID)
	for _, after := range [][]string{{""}, {" "}, {dep.ID + ","}, {dep.ID, ""}} {
		req := processRequest(t, "true")
		req.After = after
		_, err := te.Submit(context.Background(), req)
		if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), "names no run") {
			t.Errorf("--after %q: %v, want refused", after, err)
		}
	}
}
