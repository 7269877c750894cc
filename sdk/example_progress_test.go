//go:build !wasip1

package sdk_test

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// A progress plugin turns lines of a run's output into progress. The
// host sends only lines that contain one of the manifest's Prefilter
// literals, in batches (stdout and stderr interleaved, without line
// endings), with the run's state so far in Last: the plugin keeps no
// state between calls. The host merges each update into the state
// (Progress.Merge); the SDK keeps apart the updates a metric history
// needs (metrics, a new step), folds the others into them and thins them
// to at most MaxUpdates before answering (ParseOutput.Thinned).
func ExamplePlugin_progress() {
	p := sdk.Plugin{
		Manifest: sdk.Manifest{
			Name:      "myframework-progress",
			Version:   "0.1.0",
			Prefilter: []string{"iter "}, // the host sends no other line
		},
		Parse: parseIters,
	}

	// Two batches of one run: what runbox_parse receives, and answers.
	var state *sdk.Progress
	for _, batch := range [][]string{
		{"iter 5/20 loss=0.9", "loading next iter shard", "iter 10/20 loss=0.5"},
		{"iter 15 loss=0.4"},
	} {
		in, _ := sdk.ParseInput{Lines: batch, Last: state}.AppendJSONNoEscapeHTML(nil)
		fmt.Println(string(in))

		var pi sdk.ParseInput
		decode(string(in), &pi)
		out, err := p.Parse(pi)
		if err != nil {
			panic(err)
		}
		out = out.Thinned() // the SDK does this before answering
		show(out)

		if state == nil {
			state = &sdk.Progress{}
		}
		for _, u := range out.Updates {
			state.Merge(u) // the host does this
		}
	}
	// Output:
	// {"lines":["iter 5/20 loss=0.9","loading next iter shard","iter 10/20 loss=0.5"]}
	// {"updates":[{"step":5,"total":20,"percentage":25,"metrics":{"loss":0.9},"source":"myframework"},{"step":10,"total":20,"percentage":50,"metrics":{"loss":0.5},"source":"myframework"}]}
	// {"lines":["iter 15 loss=0.4"],"last":{"step":10,"total":20,"percentage":50,"metrics":{"loss":0.5},"source":"myframework"}}
	// {"updates":[{"step":15,"percentage":75,"metrics":{"loss":0.4},"source":"myframework"}]}
}

// parseIters reads "iter STEP/TOTAL loss=X", or "iter STEP loss=X" once
// the total is known from an earlier batch (in.Last).
func parseIters(in sdk.ParseInput) (sdk.ParseOutput, error) {
	var out sdk.ParseOutput
	for _, line := range in.Lines {
		_, rest, ok := strings.Cut(line, "iter ")
		counts, loss, ok2 := strings.Cut(rest, " loss=")
		if !ok || !ok2 {
			continue // a line with the literal that is not ours
		}
		step, total, _ := strings.Cut(counts, "/")
		var u sdk.Progress
		var err error
		if u.Step, err = strconv.ParseInt(step, 10, 64); err != nil {
			continue
		}
		if total != "" {
			if u.Total, err = strconv.ParseInt(total, 10, 64); err != nil {
				continue
			}
		}
		l, err := strconv.ParseFloat(loss, 64)
		if err != nil {
			continue
		}
		u.Metrics = map[string]float64{"loss": l}
		u.Source = "myframework"
		if t := u.Total; t > 0 || in.Last != nil && in.Last.Total > 0 {
			if t == 0 {
				t = in.Last.Total
			}
			u.Percentage = 100 * float64(u.Step) / float64(t)
		}
		out.Updates = append(out.Updates, u)
	}
	return out, nil
}
