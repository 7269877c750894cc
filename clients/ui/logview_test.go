package ui

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
)

// The run page's log view is bounded: a run that printed one 64 MiB line
// (a 500 MB one made runbox ui grow to 1.7 GB and send all of it) gets at
// most MaxLogView bytes of it, after a marker saying how much was cut, and
// the dashboard allocates a small multiple of that, not of the line.
func TestLogViewBoundsAHugeLine(t *testing.T) {
	e := startEnv(t)
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Command: []string{"sh", "-c", `head -c 67108864 /dev/zero | tr '\0' x; echo; echo last-line`},
		Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if end, err := e.c.Wait(context.Background(), r.ID, 0); err != nil || end.State != "succeeded" {
		t.Fatalf("run: %+v %v", end, err)
	}
	req, _ := http.NewRequest("GET", e.base()+"/api/runs/"+r.ID+"/log", nil)
	req.Header.Set(tokenHeader, e.srv.token)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("sent %d bytes; this process (dashboard, daemon and client) allocated %d bytes for it", len(body), alloc)
	if resp.StatusCode != 200 {
		t.Fatalf("%d %s", resp.StatusCode, body[:min(len(body), 300)])
	}
	if len(body) > MaxLogView+8<<10 {
		t.Fatalf("the log view sent %d bytes, bound %d", len(body), MaxLogView)
	}
	if alloc > 32<<20 {
		t.Fatalf("the log view allocated %d bytes for a %d-byte view", alloc, MaxLogView)
	}
	var v struct{ Lines []LogLine }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Lines) < 2 || v.Lines[0].S != 5 || !strings.Contains(v.Lines[0].T, "63.0 MiB of output cut here") {
		t.Fatalf("first line %+v, want the cut marker", v.Lines[:min(len(v.Lines), 1)])
	}
	if last := v.Lines[len(v.Lines)-1].T; !strings.HasSuffix(last, "last-line\n") {
		t.Fatalf("the view ends %q, want the run's last line", last[max(0, len(last)-40):])
	}
}
