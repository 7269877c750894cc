package daemon

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/sandbox/runlog"
)

// hugeLine is a shell command printing one line of 64 MiB, then a short
// one: the log a tail view must not send whole.
const hugeLine = `head -c 67108864 /dev/zero | tr '\0' x; echo; echo last-line`

// A tail view is bounded by bytes as well as lines: a run that printed one
// 64 MiB line sends at most tail_bytes of it, after a meta record saying
// how much was cut. Without tail_bytes the same request sends all of it
// (the line bound alone does not hold).
func TestTailBytesBoundsAHugeLine(t *testing.T) {
	d := startDaemon(t)
	r := d.run(t, "sh", "-c", hugeLine)
	if got := d.wait(t, r.ID); got.State != "succeeded" {
		t.Fatalf("run: %+v", got)
	}
	view := func(q url.Values) (sent int, frames []client.Frame) {
		err := d.c.Logs(context.Background(), r.ID, q, func(f client.Frame) error {
			sent += len(f.Data)
			if len(frames) < 3 {
				f.Data = append([]byte(nil), f.Data[:min(len(f.Data), 200)]...)
				frames = append(frames, f)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return sent, frames
	}
	const bound = 1 << 20
	sent, _ := view(url.Values{"tail": {"10"}, "stream": {"stdout"}})
	if sent < 64<<20 {
		t.Fatalf("baseline: tail=10 alone sent %d bytes; the huge line should be all of it", sent)
	}
	sent, frames := view(url.Values{"tail": {"10"}, "tail_bytes": {"1048576"}, "stream": {"stdout"}})
	if sent > bound+200 {
		t.Fatalf("tail_bytes=%d sent %d bytes", bound, sent)
	}
	if len(frames) < 2 || runlog.Stream(frames[0].Stream) != runlog.Meta || !strings.Contains(string(frames[0].Data), "63.0 MiB of output cut here; this view shows the last 1.0 MiB") {
		t.Fatalf("first frame %+v, want the cut marker", frames)
	}
	if !strings.HasPrefix(string(frames[1].Data), "xxxx") {
		t.Fatalf("after the marker: %q", frames[1].Data)
	}
	// Short lines under the byte bound: the line bound decides, no marker.
	sent, frames = view(url.Values{"tail": {"1"}, "tail_bytes": {"1048576"}, "stream": {"stdout"}})
	if sent != len("last-line\n") || runlog.Stream(frames[0].Stream) != runlog.Stdout {
		t.Fatalf("tail=1: %d bytes, %+v", sent, frames)
	}
	// A byte bound alone.
	if sent, _ = view(url.Values{"tail_bytes": {"100"}, "stream": {"stdout"}}); sent > 200 {
		t.Fatalf("tail_bytes=100 alone sent %d bytes", sent)
	}
	if code, e := d.raw(t, "GET", "/v1/runs/"+r.ID+"/logs?tail_bytes=lots", ""); code != 400 || !strings.Contains(e.Error, "tail_bytes") {
		t.Fatalf("bad tail_bytes: %d %+v", code, e)
	}
}
