package host

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/store"
)

// Runs side by side (runbox compare, the dashboard's compare view) and a
// plan's experience of what the failures had: both read the records of
// what ran (record.go).

// CompareQuery selects and shapes a comparison.
type CompareQuery struct {
	Runs   []string          // names the CLI takes
	Labels map[string]string // runs with all these labels
	Sweep  string            // a sweep's members (id or prefix)
	record.CompareOptions
}

// maxCompare bounds the runs a label selects.
const maxCompare = 10000

// Compare puts runs side by side: params that differ, each metric's last
// and best, duration, outcome.
func (e *Engine) Compare(ctx context.Context, q CompareQuery) (*record.Comparison, error) {
	var runs []*store.Run
	seen := map[string]bool{}
	for _, name := range q.Runs {
		r, err := e.Get(ctx, name)
		if err != nil {
			return nil, err
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			runs = append(runs, r)
		}
	}
	if len(q.Labels) > 0 {
		all, err := e.cfg.Store.ListRuns(ctx, store.Filter{Limit: maxCompare})
		if err != nil {
			return nil, err
		}
		for _, r := range all {
			if hasLabels(r, q.Labels) && !seen[r.ID] {
				seen[r.ID] = true
				runs = append(runs, r)
			}
		}
	}
	if q.Sweep != "" {
		sw, err := e.cfg.Store.GetSweep(ctx, q.Sweep)
		if err != nil {
			return nil, err
		}
		all, err := e.List(ctx, store.Filter{Sweep: sw.ID})
		if err != nil {
			return nil, err
		}
		// A retried member is compared by its latest attempt, as its
		// row in the sweep's table (sweep.go: memberAttempts).
		var members []*store.Run
		for _, att := range memberAttempts(all) {
			members = append(members, att[len(att)-1])
		}
		sort.Slice(members, func(i, j int) bool { return memberIndex(members[i]) < memberIndex(members[j]) })
		for _, r := range members {
			if !seen[r.ID] {
				seen[r.ID] = true
				runs = append(runs, r)
			}
		}
	}
	if len(runs) == 0 {
		return nil, badRequest("no runs to compare: name runs, a label that some runs have, or a sweep")
	}
	rows := make([]record.Row, 0, len(runs))
	for _, r := range runs {
		row, err := e.compareRow(ctx, r, q.Goals)
		if err != nil {
			return nil, err
		}
		rows = append(rows, row)
	}
	if err := record.CheckSort(rows, q.CompareOptions); err != nil {
		return nil, badRequest("%v", err)
	}
	c := record.Compare(rows, q.CompareOptions)
	return &c, nil
}

func memberIndex(r *store.Run) int {
	if r.Campaign == nil {
		return 0
	}
	return r.Campaign.Index
}

func hasLabels(r *store.Run, want map[string]string) bool {
	for k, v := range want {
		if got, ok := r.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

func (e *Engine) compareRow(ctx context.Context, r *store.Run, goals map[string]record.Goal) (record.Row, error) {
	row := record.Row{RunID: r.ID, Short: r.Short, Name: r.Name, State: string(r.State), CreatedAt: r.CreatedAt}
	if r.Exit != nil {
		c := r.Exit.Code
		row.ExitCode = &c
	}
	if r.Failure != nil {
		row.FailureCode = r.Failure.Code
	}
	if r.StartedAt != nil && r.EndedAt != nil {
		row.Duration = r.EndedAt.Sub(*r.StartedAt).Seconds()
	}
	rec, err := e.Record(ctx, r.ID)
	if err != nil {
		return row, err
	}
	if rec != nil {
		row.Params = rec.Params
	} else {
		row.Params = record.Params(r.Spec.Command)
	}
	if c := r.Campaign; c != nil && len(c.Params) > 0 {
		// A sweep member's params are its set, whatever its command
		// line looks like ({lr} may sit in a config path).
		p := make(map[string]string, len(row.Params)+len(c.Params))
		for k, v := range row.Params {
			p[k] = v
		}
		for k, v := range c.Params {
			p[k] = v
		}
		row.Params = p
	}
	_, h, err := e.Metrics(ctx, r.ID)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return row, err
	}
	if h != nil {
		for _, s := range h.Series {
			if !ownMetric(s.Name) || len(s.Points) == 0 {
				continue
			}
			lo, hi := math.NaN(), math.NaN()
			for _, p := range s.Points {
				if !math.IsNaN(p.Min) && (math.IsNaN(lo) || p.Min < lo) {
					lo = p.Min
				}
				if !math.IsNaN(p.Max) && (math.IsNaN(hi) || p.Max > hi) {
					hi = p.Max
				}
			}
			if row.Metrics == nil {
				row.Metrics = map[string]record.Metric{}
			}
			row.Metrics[s.Name] = record.Summarise(s.Points[len(s.Points)-1].Value, lo, hi, record.GoalOf(s.Name, goals))
		}
	}
	return row, nil
}

// ExperienceChanges says what the recent failures of a command had that
// its successes did not ("the last 3 failure(s) had torch 2.3.0, the 2
// success(es) 2.2.1"), from the records of what ran: packages, the
// interpreter's version, the image, the GPU driver. A plan's experience
// summary carries it.
func (e *Engine) ExperienceChanges(ctx context.Context, command []string) []string {
	runs, err := e.cfg.Store.RecentEnded(ctx, Fingerprint(command), 20)
	if err != nil || len(runs) == 0 {
		return nil
	}
	fails := map[string]map[string]int{} // thing -> value -> runs
	oks := map[string]map[string]int{}
	var nf, nok int
	for _, r := range runs {
		tally := oks
		switch r.State {
		case store.Succeeded:
		case store.Failed, store.TimedOut:
			tally = fails
		default:
			continue
		}
		rec, err := e.Record(ctx, r.ID)
		if err != nil || rec == nil || !rec.Complete {
			continue
		}
		if r.State == store.Succeeded {
			nok++
		} else {
			nf++
		}
		for k, v := range facts(rec) {
			if tally[k] == nil {
				tally[k] = map[string]int{}
			}
			tally[k][v]++
		}
	}
	var out []string
	for k, fv := range fails {
		if len(fv) != 1 || len(oks[k]) != 1 {
			continue // not one value in every failure and another in every success
		}
		for v, n := range fv {
			for w, m := range oks[k] {
				if v != w && n == nf && m == nok {
					out = append(out, fmt.Sprintf("the last %d failure(s) had %s %s, the %d success(es) %s", n, k, v, m, w))
				}
			}
		}
	}
	sort.Strings(out)
	return out
}

// facts are the things of a record an experience summary compares.
func facts(rec *record.Record) map[string]string {
	f := map[string]string{}
	if in := rec.Interpreter; in != nil {
		if in.Version != "" {
			f["python"] = in.Version
		}
		for p, v := range in.Packages {
			f[p] = v
		}
	}
	if im := rec.Image; im != nil && im.ID != "" {
		f["image "+im.Name] = strings.TrimPrefix(im.ID, "sha256:")[:min(12, len(strings.TrimPrefix(im.ID, "sha256:")))]
	}
	if h := rec.Host; h != nil && h.Driver != "" {
		f["GPU driver"] = h.Driver
	}
	return f
}
