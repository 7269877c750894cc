package progress

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// A burst of ##PROGRESS## lines sent as one batch answers one update per
// line up to sdk.MaxUpdates, evenly thinned, the last line's kept: each
// the state the host had after that line.
func TestBatchKeepsEachStep(t *testing.T) {
	for _, n := range []int{1, 5, sdk.MaxUpdates, 256} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			lines := make([]string, n)
			for i := range lines {
				lines[i] = fmt.Sprintf(`##PROGRESS## {"step": %d, "total": %d, "metrics": {"loss": %d}}`, i+1, n, 1000-i)
			}
			out := Parse(sdk.ParseInput{Lines: lines})
			if want := min(n, sdk.MaxUpdates); len(out.Updates) != want {
				t.Fatalf("%d updates, want %d", len(out.Updates), want)
			}
			for j, u := range out.Updates {
				step := int64((j + 1) * n / len(out.Updates))
				if u.Step != step || u.Metrics["loss"] != float64(1000-step+1) {
					t.Fatalf("update %d: step %d loss %v, want step %d loss %d", j, u.Step, u.Metrics, step, 1000-step+1)
				}
			}
		})
	}
}

// On every recorded log, the states the host goes through when a batch's
// updates are merged one by one are states it also reaches when the lines
// come one at a time (same step and metrics, in order), and the batch ends
// where merging its every line would.
func TestBatchUpdatesAreStatesOfTheRun(t *testing.T) {
	logs, _ := filepath.Glob("testdata/*.log")
	if len(logs) == 0 {
		t.Fatal("no testdata logs")
	}
	for _, path := range logs {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			lines := splitLines(string(data))
			key := func(p *sdk.Progress) string { return fmt.Sprint(p.Step, p.Metrics) }
			var one []string
			var last *sdk.Progress
			for _, l := range lines {
				for _, u := range Parse(sdk.ParseInput{Lines: []string{l}, Last: last}).Updates {
					if last == nil {
						last = &sdk.Progress{}
					}
					last.Merge(u)
					one = append(one, key(last))
				}
			}
			var batched *sdk.Progress
			k := 0
			for start := 0; start < len(lines); start += 256 {
				out := Parse(sdk.ParseInput{Lines: lines[start:min(start+256, len(lines))], Last: batched})
				if len(out.Updates) > sdk.MaxUpdates {
					t.Fatalf("%d updates for one batch", len(out.Updates))
				}
				for _, u := range out.Updates {
					if batched == nil {
						batched = &sdk.Progress{}
					}
					batched.Merge(u)
					s := key(batched)
					for k < len(one) && one[k] != s {
						k++
					}
					if k == len(one) {
						t.Fatalf("batched state %s is not a state of the line-by-line run", s)
					}
				}
			}
			if !reflect.DeepEqual(last, batched) && !strings.Contains(path, "fuzz") {
				t.Errorf("end state line by line %+v\nbatched %+v", last, batched)
			}
		})
	}
}
