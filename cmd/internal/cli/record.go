package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// RecordFlags choose what a run keeps of what ran (run and plan share them).
type RecordFlags struct {
	Snapshot   bool `help:"Run a copy of the workspace's code taken now (tracked, modified and untracked-but-not-ignored files; ignored and large files are left in place and linked): edits made while the run waits do not change what runs. Files the run writes in the copy are copied back into the workspace when it ends (never over a file changed since; the copy is kept for those). On by default for sweep members and runs with --after."`
	NoSnapshot bool `name:"no-snapshot" help:"Run the workspace as it is when the run starts, even for a sweep member or a run with --after (which take a --snapshot by default)."`
	NoRecord   bool `name:"no-record" help:"Keep no record of what ran (git commit and diff, packages, image, host)."`
}

func (f RecordFlags) apply(req *api.RunRequest) {
	req.Snapshot, req.NoSnapshot, req.NoRecord = f.Snapshot, f.NoSnapshot, f.NoRecord
}

// DiffCmd is `runbox diff`.
type DiffCmd struct {
	A     string `arg:"" name:"run-a" help:"${run_help}" placeholder:"RUN_A"`
	B     string `arg:"" name:"run-b" help:"The run to compare with RUN_A (named the same ways)." placeholder:"RUN_B"`
	Patch bool   `help:"Also print each changed file's uncommitted changes in both runs."`
}

// Run prints what differs between two runs.
func (c *DiffCmd) Run(ctx context.Context, a *App) error {
	d, err := a.client().Diff(ctx, c.A, c.B)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(d)
	}
	printDiff(shown(), d, c.Patch)
	return nil
}

func printDiff(out io.Writer, d *api.RunDiff, patch bool) {
	name := func(short, id string) string {
		if short != "" {
			return short
		}
		return id
	}
	fmt.Fprintf(out, "%s → %s\n", name(d.AShort, d.A), name(d.BShort, d.B))
	if len(d.Changes) == 0 {
		fmt.Fprintln(out, "  nothing recorded differs")
	}
	for _, ch := range d.Changes {
		fmt.Fprintf(out, "  %s\n", ch.String())
		if patch && (ch.PatchA != "" || ch.PatchB != "") {
			for _, p := range []struct{ run, text string }{{name(d.AShort, d.A), ch.PatchA}, {name(d.BShort, d.B), ch.PatchB}} {
				if p.text == "" {
					fmt.Fprintf(out, "    run %s: no uncommitted change\n", p.run)
					continue
				}
				fmt.Fprintf(out, "    run %s:\n", p.run)
				for _, l := range strings.Split(strings.TrimRight(p.text, "\n"), "\n") {
					fmt.Fprintf(out, "      %s\n", l)
				}
			}
		}
	}
	for _, n := range d.Notes {
		fmt.Fprintf(out, "note: %s\n", n)
	}
}

// CompareCmd is `runbox compare`.
type CompareCmd struct {
	Runs      []string          `arg:"" optional:"" name:"run" help:"Runs to compare (numbers, @last, @last~N, ids or prefixes)." placeholder:"RUN"`
	Label     map[string]string `help:"Compare the runs with this label (KEY=VALUE). Repeatable: all must match." placeholder:"KEY=VALUE"`
	Sweep     string            `help:"Compare a sweep's members (its id, a prefix, or @last for the newest sweep); the dashboard's sweep page links here." placeholder:"SWEEP"`
	Filter    map[string]string `help:"Keep the runs whose parameter NAME is VALUE. Repeatable." placeholder:"NAME=VALUE"`
	Sort      string            `help:"Sort by a column: best:METRIC, last:METRIC, param:NAME, duration, created, state; a leading - reverses. Default: the first metric's best." placeholder:"COLUMN"`
	Goal      map[string]string `help:"Whether lower or higher is best for a metric (METRIC=min|max); loss-like names are min and accuracy-like ones max unless told. Repeatable." placeholder:"METRIC=GOAL"`
	AllParams bool              `name:"all-params" help:"Show every parameter, not only those that differ."`
	Limit     int               `help:"Show at most N runs (a page)." default:"50" placeholder:"N"`
	Offset    int               `help:"Skip the first N runs (the next page)." placeholder:"N"`
}

// Run prints runs side by side.
func (c *CompareCmd) Run(ctx context.Context, a *App) error {
	if len(c.Runs) == 0 && len(c.Label) == 0 && c.Sweep == "" {
		return usageError{errorf("name runs to compare, --label KEY=VALUE or --sweep ID")}
	}
	q := url.Values{"run": c.Runs}
	if c.Sweep != "" {
		q.Set("sweep", c.Sweep)
	}
	for _, m := range []struct {
		key string
		m   map[string]string
	}{{"label", c.Label}, {"filter", c.Filter}, {"goal", c.Goal}} {
		for k, v := range m.m {
			q.Add(m.key, k+"="+v)
		}
	}
	if c.Sort != "" {
		q.Set("sort", c.Sort)
	}
	if c.AllParams {
		q.Set("all_params", "1")
	}
	q.Set("limit", strconv.Itoa(c.Limit))
	q.Set("offset", strconv.Itoa(c.Offset))
	cmp, err := a.client().Compare(ctx, q)
	if err != nil {
		return argError(err)
	}
	if a.G.JSON {
		return a.PrintJSON(cmp)
	}
	printComparison(shown(), cmp)
	return nil
}

func printComparison(out io.Writer, c *api.Comparison) {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	head := []string{"RUN", "STATE"}
	head = append(head, c.Params...)
	for _, m := range c.Metrics {
		head = append(head, m+" last")
		if c.Goals[m] != "" {
			head = append(head, m+" best("+c.Goals[m]+")")
		}
	}
	head = append(head, "DURATION")
	fmt.Fprintln(w, strings.Join(head, "\t"))
	for _, r := range c.Rows {
		name := r.Short
		if name == "" {
			name = r.RunID
		}
		state := r.State
		if r.FailureCode != "" {
			state += " " + r.FailureCode
		}
		cells := []string{name, state}
		for _, p := range c.Params {
			v, ok := r.Params[p]
			if !ok {
				v = "-"
			}
			cells = append(cells, v)
		}
		for _, m := range c.Metrics {
			mv, ok := r.Metrics[m]
			cells = append(cells, num(mv.Last, ok))
			if c.Goals[m] != "" {
				b := ok && mv.Best != nil
				var v float64
				if b {
					v = *mv.Best
				}
				cells = append(cells, num(v, b))
			}
		}
		d := "-"
		if r.Duration > 0 {
			d = fmt.Sprintf("%.1fs", r.Duration)
		}
		cells = append(cells, d)
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	w.Flush()
	if shown := len(c.Rows); c.Offset > 0 || shown < c.Total {
		fmt.Fprintf(out, "runs %d-%d of %d (sorted by %s); --offset %d for more\n", c.Offset+1, c.Offset+shown, c.Total, c.Sort, c.Offset+shown)
	} else {
		fmt.Fprintf(out, "%d runs, sorted by %s\n", c.Total, c.Sort)
	}
}

// argError is err as the command's error: a bad request (an unknown
// --sort column, a bad --goal) is the command line's fault: exit 2.
func argError(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) && ce.Code == api.CodeBadRequest {
		return usageError{errors.New(ce.Msg)}
	}
	return friendly(err)
}

func num(v float64, ok bool) string {
	if !ok {
		return "-"
	}
	return fmtFloatPrec(v, 5)
}

// printWhatRan adds to `runbox status` the machine's use, what changed
// since the command last worked, and a summary of the record.
func printWhatRan(w *tabwriter.Writer, r *api.Run) {
	if m := r.Machine; m != nil {
		fmt.Fprintf(w, "machine:\tcpu %.0f%% (peak %.0f%%), memory %s (peak %s)", m.CPUPercent, m.PeakCPUPercent, humanBytes(m.RSSBytes), humanBytes(m.PeakRSSBytes))
		if m.ReadRate > 0 || m.WriteRate > 0 {
			fmt.Fprintf(w, ", read %s/s, write %s/s", humanBytes(uint64(m.ReadRate)), humanBytes(uint64(m.WriteRate)))
		}
		if m.GPUPercent != nil {
			fmt.Fprintf(w, ", gpu %.0f%%", *m.GPUPercent)
		}
		if m.GPUMemBytes != nil && m.PeakGPUMemory != nil {
			fmt.Fprintf(w, ", gpu memory %s (peak %s)", humanBytes(*m.GPUMemBytes), humanBytes(*m.PeakGPUMemory))
		}
		fmt.Fprintln(w)
	}
	if sw := r.SinceWorked; sw != nil {
		name := sw.ShortID
		if name == "" {
			name = sw.RunID
		}
		fmt.Fprintf(w, "since it last worked:\t(run %s succeeded)\n", name)
		for _, l := range sw.Summary {
			fmt.Fprintf(w, "\t• %s\n", l)
		}
	}
	rec := r.Record
	if rec == nil {
		return
	}
	if c := rec.Code; c != nil {
		s := "git " + shortSHA(c.Commit)
		if c.Branch != "" {
			s += " on " + c.Branch
		}
		if c.Dirty {
			s += fmt.Sprintf(", uncommitted changes in %d file(s)", len(c.DiffFiles))
			if len(c.Untracked) > 0 {
				s += fmt.Sprintf(", %d untracked", len(c.Untracked)+c.UntrackedMore)
			}
		}
		if c.DiffCut != "" {
			s += " (" + c.DiffCut + ")"
		}
		fmt.Fprintf(w, "code:\t%s\n", s)
	}
	if in := rec.Interpreter; in != nil {
		s := in.Path
		if in.Version != "" {
			s += " " + in.Version
		}
		if len(in.Packages) > 0 {
			s += fmt.Sprintf(", %d packages", len(in.Packages))
		}
		if in.Conda != "" {
			s += ", conda env " + in.Conda
		}
		if in.Note != "" {
			s += " (" + in.Note + ")"
		}
		fmt.Fprintf(w, "interpreter:\t%s\n", s)
	}
	if im := rec.Image; im != nil && (im.ID != "" || im.Digest != "") {
		fmt.Fprintf(w, "image:\t%s %s %s\n", im.Name, shortSHA(strings.TrimPrefix(im.ID, "sha256:")), im.Digest)
	}
	if h := rec.Host; h != nil {
		s := fmt.Sprintf("%s %s, %d cpus, %s", h.OS, h.Kernel, h.CPUs, humanBytes(h.MemoryBytes))
		var gpus []string
		for _, g := range h.GPUs {
			gpus = append(gpus, g.Name)
		}
		if len(gpus) > 0 {
			s += fmt.Sprintf(", %s (driver %s, CUDA %s)", strings.Join(gpus, ", "), h.Driver, h.CUDA)
		}
		fmt.Fprintf(w, "host:\t%s\n", s)
	}
	if sn := rec.Snapshot; sn != nil {
		fmt.Fprintf(w, "snapshot:\t%d files, %s (%d left in place)\n", sn.Files, humanBytes(uint64(sn.Bytes)), len(sn.Left))
		if len(sn.Returned) > 0 {
			fmt.Fprintf(w, "copied back:\t%s\n", strings.Join(sn.Returned, ", "))
		}
		if len(sn.Skipped) > 0 {
			fmt.Fprintf(w, "not copied back:\t%s (kept in %s)\n", strings.Join(sn.Skipped, ", "), sn.Kept)
		}
	}
	notes := append([]string(nil), rec.Notes...)
	sort.Strings(notes)
	for i, n := range notes {
		label := ""
		if i == 0 {
			label = "record:"
		}
		fmt.Fprintf(w, "%s\t%s\n", label, n)
	}
}

func shortSHA(s string) string {
	if len(s) > 12 {
		return s[:12]
	}
	return s
}
