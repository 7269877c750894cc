// Package corpus measures detection on a labelled corpus of real output:
// failure tails and progress snippets, each labelled with the failure code
// or the progress state that should be found (the format is in
// plugins/builtin/testdata/corpus/README.md, runbox's own corpus). Every
// case goes through plugins/analyze, the path `runbox analyze --json`
// takes, and the report gives accuracy per code, per framework and per
// split (train and held-out). `runbox analyze --corpus DIR` prints it, so
// a team can hold its own plugins to its own corpus; `make eval` runs it
// on runbox's.
package corpus

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/analyze"
	"github.com/runbox/runbox/sdk"
)

// Failure is one labelled failure tail.
type Failure struct {
	ID        string `json:"id"`
	File      string `json:"file"`
	Source    string `json:"source"`
	Framework string `json:"framework"`
	ExitCode  int    `json:"exit_code"`
	Signal    string `json:"signal"`
	OOM       bool   `json:"oom"`
	Code      string `json:"code"`
	Split     string `json:"split"`
	Batch     string `json:"batch"` // a collection round scored on its own; "" for the first rounds
	Note      string `json:"note"`
}

// Expect is the progress state a snippet should leave; nil fields are
// not said by the output and not checked.
type Expect struct {
	Step       *float64          `json:"step"`
	Total      *float64          `json:"total"`
	Percent    *float64          `json:"percent"`
	Epoch      *float64          `json:"epoch"`
	EpochTotal *float64          `json:"epoch_total"`
	Phase      *string           `json:"phase"`
	Finished   *bool             `json:"finished"`
	Metrics    map[string]Number `json:"metrics"`
}

// Number is a metric's expected value: a JSON number, or "nan", "inf",
// "-inf" for the values JSON cannot hold.
type Number float64

// UnmarshalJSON reads a number or one of the non-finite names.
func (n *Number) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		switch strings.ToLower(s) {
		case "nan":
			*n = Number(math.NaN())
		case "inf", "+inf", "infinity":
			*n = Number(math.Inf(1))
		case "-inf", "-infinity":
			*n = Number(math.Inf(-1))
		default:
			return fmt.Errorf("metric value %q is not a number", s)
		}
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*n = Number(f)
	return nil
}

// Progress is one labelled progress snippet.
type Progress struct {
	ID        string `json:"id"`
	File      string `json:"file"`
	Source    string `json:"source"`
	Framework string `json:"framework"`
	Expect    Expect `json:"expect"`
	Split     string `json:"split"`
	Batch     string `json:"batch"`
	Note      string `json:"note"`
}

// Corpus is the whole labelled set, with the directory its files are in.
type Corpus struct {
	Dir      string
	Failures []Failure
	Progress []Progress
}

// Load reads failures.jsonl and progress.jsonl from dir.
func Load(dir string) (*Corpus, error) {
	c := &Corpus{Dir: dir}
	if err := readJSONL(filepath.Join(dir, "failures.jsonl"), &c.Failures); err != nil {
		return nil, err
	}
	if err := readJSONL(filepath.Join(dir, "progress.jsonl"), &c.Progress); err != nil {
		return nil, err
	}
	return c, nil
}

func readJSONL[T any](path string, out *[]T) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("corpus: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var v T
		if err := json.Unmarshal([]byte(line), &v); err != nil {
			return fmt.Errorf("corpus: %s:%d: %w", path, n, err)
		}
		*out = append(*out, v)
	}
	return sc.Err()
}

// Result is one case's outcome.
type Result struct {
	ID, Framework, Split, Batch, Want, Got string
	OK                                     bool
	Why                                    string // what differed
}

// Report is every case's outcome.
type Report struct {
	Failures []Result
	Progress []Result
}

// Run analyzes every case with h's plugins; fallback names the failure no
// classifier answered (the engine's rule).
func (c *Corpus) Run(ctx context.Context, h *plugins.Host, fallback func(sdk.ClassifyInput) *sdk.Failure) (*Report, error) {
	rep := &Report{}
	for _, f := range c.Failures {
		got, err := c.analyze(ctx, h, f.File, sdk.ClassifyInput{ExitCode: f.ExitCode, Signal: f.Signal, OOMKilled: f.OOM}, fallback)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.ID, err)
		}
		r := Result{ID: f.ID, Framework: f.Framework, Split: f.Split, Batch: f.Batch, Want: f.Code}
		if got.Failure != nil {
			r.Got = got.Failure.Code
		}
		r.OK = r.Got == r.Want
		if !r.OK {
			r.Why = "got " + r.Got
		}
		rep.Failures = append(rep.Failures, r)
	}
	for _, p := range c.Progress {
		got, err := c.analyze(ctx, h, p.File, sdk.ClassifyInput{}, fallback)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.ID, err)
		}
		r := Result{ID: p.ID, Framework: p.Framework, Split: p.Split, Batch: p.Batch, Want: "progress"}
		r.Why = p.Expect.diff(got.Progress)
		r.OK = r.Why == ""
		rep.Progress = append(rep.Progress, r)
	}
	return rep, nil
}

func (c *Corpus) analyze(ctx context.Context, h *plugins.Host, file string, end sdk.ClassifyInput, fallback func(sdk.ClassifyInput) *sdk.Failure) (analyze.Result, error) {
	f, err := os.Open(filepath.Join(c.Dir, file))
	if err != nil {
		return analyze.Result{}, err
	}
	defer f.Close()
	return analyze.Analyze(ctx, h, f, end, fallback)
}

// diff says how got differs from what e expects ("" when it does not).
func (e Expect) diff(got *sdk.Progress) string {
	var p sdk.Progress
	if got != nil {
		p = *got
	}
	var d []string
	num := func(name string, want *float64, have float64, tol float64) {
		if want != nil && math.Abs(*want-have) > tol {
			d = append(d, fmt.Sprintf("%s %g, want %g", name, have, *want))
		}
	}
	num("step", e.Step, float64(p.Step), 0)
	num("total", e.Total, float64(p.Total), 0)
	percent := p.Percentage
	if percent == 0 && p.Total > 0 {
		percent = 100 * float64(p.Step) / float64(p.Total)
	}
	num("percent", e.Percent, percent, 1)
	epoch := float64(p.Epoch)
	if p.EpochExact != 0 {
		epoch = p.EpochExact // fractional epochs as printed
	}
	num("epoch", e.Epoch, epoch, 0)
	num("epoch_total", e.EpochTotal, float64(p.EpochTotal), 0)
	if e.Phase != nil && *e.Phase != "" && !strings.EqualFold(*e.Phase, p.Phase) && p.Phase != "" {
		d = append(d, fmt.Sprintf("phase %q, want %q", p.Phase, *e.Phase))
	}
	if e.Finished != nil && *e.Finished && !(percent >= 99.95) {
		d = append(d, "not finished")
	}
	// A snippet that says nothing of progress (a download bar before
	// training, say) must not get any.
	nothing := e.Step == nil && e.Total == nil && e.Percent == nil && e.Epoch == nil &&
		e.EpochTotal == nil && len(e.Metrics) == 0 && (e.Finished == nil || !*e.Finished)
	if nothing && got != nil && (p.Step != 0 || p.Percentage != 0 || p.Epoch != 0) {
		d = append(d, "progress where there is none")
	}
	// Metric names compare case-insensitively with spaces as underscores,
	// values to a relative 1e-3 (printed values are rounded); the corpus
	// README has these conventions.
	// Two names that compare equal ("Loss" and "loss") both answer: the
	// metric is right only when every one of them holds the value (a map
	// keeps one of them at random, and a score must not depend on it).
	metrics := map[string][]float64{}
	for k, v := range p.Metrics {
		metrics[metricKey(k)] = append(metrics[metricKey(k)], v)
	}
	for name, w := range e.Metrics {
		want := float64(w)
		haves, ok := metrics[metricKey(name)]
		if !ok {
			d = append(d, "no metric "+name)
			continue
		}
		if dd := metricDiff(name, want, haves); dd != "" {
			d = append(d, dd)
		}
	}
	return strings.Join(d, "; ")
}

// metricDiff says how the values reported under a name differ from want,
// "" when all of them hold it.
func metricDiff(name string, want float64, haves []float64) string {
	slices.Sort(haves)
	for _, have := range haves {
		// NaN matches NaN, an infinity the one of its sign; a non-finite
		// value where a number is expected is wrong (the tolerance test
		// alone would pass it: NaN compares false).
		switch {
		case math.IsNaN(want) || math.IsInf(want, 0) || math.IsNaN(have) || math.IsInf(have, 0):
			if !(math.IsNaN(want) && math.IsNaN(have)) && have != want {
				return fmt.Sprintf("%s %g, want %g", name, have, want)
			}
		case math.Abs(have-want) > 1e-3*math.Max(math.Abs(want), 1e-9):
			return fmt.Sprintf("%s %g, want %g", name, have, want)
		}
	}
	return ""
}

func metricKey(name string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimSpace(name)), " ", "_")
}

// Tally is right/all for one group.
type Tally struct{ Right, All int }

// Rate is the share right, 0..1.
func (t Tally) Rate() float64 {
	if t.All == 0 {
		return 0
	}
	return float64(t.Right) / float64(t.All)
}

// By groups results by key and split.
func By(rs []Result, key func(Result) string) map[string]map[string]*Tally {
	out := map[string]map[string]*Tally{}
	for _, r := range rs {
		for _, split := range []string{r.Split, "all"} {
			k := key(r)
			if out[k] == nil {
				out[k] = map[string]*Tally{}
			}
			t := out[k][split]
			if t == nil {
				t = &Tally{}
				out[k][split] = t
			}
			t.All++
			if r.OK {
				t.Right++
			}
		}
	}
	return out
}

// Total tallies results per split ("train", "heldout", "all").
func Total(rs []Result) map[string]*Tally {
	return By(rs, func(Result) string { return "" })[""]
}

// Markdown writes a table of groups: name, train, heldout, all.
func Markdown(title string, groups map[string]map[string]*Tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "| %s | train | held-out | all |\n|---|---|---|---|\n", title)
	names := make([]string, 0, len(groups))
	for k := range groups {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, n := range names {
		g := groups[n]
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", n, g["train"], g["heldout"], g["all"])
	}
	return b.String()
}

// Write prints the report: totals per split, tables per failure code and
// per framework, and with misses the cases it got wrong.
func (rep *Report) Write(w io.Writer, misses bool) {
	ft, pt := Total(rep.Failures), Total(rep.Progress)
	fmt.Fprintf(w, "failure codes right: train %s, held-out %s, all %s\n", ft["train"], ft["heldout"], ft["all"])
	fmt.Fprintf(w, "progress states right: train %s, held-out %s, all %s\n\n", pt["train"], pt["heldout"], pt["all"])
	fmt.Fprintln(w, Markdown("failure code", By(rep.Failures, func(r Result) string { return r.Want })))
	fmt.Fprintln(w, Markdown("framework (failures)", By(rep.Failures, func(r Result) string { return r.Framework })))
	fmt.Fprintln(w, Markdown("framework (progress)", By(rep.Progress, func(r Result) string { return r.Framework })))
	// A batch collected after the rules were written is reported on its
	// own too: it is the figure that says how the rules generalise.
	for _, b := range batches(rep) {
		in := func(rs []Result) []Result {
			var out []Result
			for _, r := range rs {
				if r.Batch == b {
					out = append(out, r)
				}
			}
			return out
		}
		bf, bp := in(rep.Failures), in(rep.Progress)
		ft, pt := Total(bf), Total(bp)
		fmt.Fprintf(w, "batch %s: failure codes right: train %s, held-out %s, all %s\n", b, ft["train"], ft["heldout"], ft["all"])
		fmt.Fprintf(w, "batch %s: progress states right: train %s, held-out %s, all %s\n\n", b, pt["train"], pt["heldout"], pt["all"])
		fmt.Fprintln(w, Markdown("framework (failures, batch "+b+")", By(bf, func(r Result) string { return r.Framework })))
		fmt.Fprintln(w, Markdown("framework (progress, batch "+b+")", By(bp, func(r Result) string { return r.Framework })))
	}
	if !misses {
		return
	}
	fmt.Fprintln(w, "misses:")
	for _, r := range append(append([]Result(nil), rep.Failures...), rep.Progress...) {
		if !r.OK {
			fmt.Fprintf(w, "  %s [%s, %s] want %s: %s\n", r.ID, r.Framework, r.Split, r.Want, r.Why)
		}
	}
}

// batches lists the named batches in the report, sorted.
func batches(rep *Report) []string {
	seen := map[string]bool{}
	for _, r := range append(append([]Result(nil), rep.Failures...), rep.Progress...) {
		if r.Batch != "" {
			seen[r.Batch] = true
		}
	}
	out := make([]string, 0, len(seen))
	for b := range seen {
		out = append(out, b)
	}
	sort.Strings(out)
	return out
}

// String is right/all with the share, or "–" for an empty group.
func (t *Tally) String() string {
	if t == nil || t.All == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", t.Right, t.All, 100*t.Rate())
}
