package daemon

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/record"
	"github.com/runbox/runbox/store"
)

// What ran and what changed: the record, "since it last worked" and the
// machine's use on a run's page; diff and compare.

func (s *server) recordRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/diff", s.diff)
	mux.HandleFunc("GET /v1/compare", s.compare)
}

// withRecord adds to one run's view its record, what changed since it last
// worked, and its machine use. Each is best effort: a run is shown even
// when one of them cannot be read.
func (s *server) withRecord(ctx context.Context, run *store.Run, v *api.Run) {
	if rec, err := s.eng.Record(ctx, run.ID); err == nil {
		v.Record = rec
	}
	if sw, err := s.eng.SinceWorked(ctx, run); err == nil {
		v.SinceWorked = sw
	}
	v.Machine = s.machine(ctx, run.ID)
}

func (s *server) machine(ctx context.Context, id string) *api.Machine {
	// All series, then the machine's: a store read by names stops at the
	// first name a run lacks (no GPU series on most machines).
	_, h, err := s.eng.Metrics(ctx, id)
	if err != nil || h == nil || h.Get(host.SysRSS) == nil {
		return nil
	}
	m := &api.Machine{}
	last := func(name string) (float64, float64, bool) {
		ser := h.Get(name)
		if ser == nil || len(ser.Points) == 0 {
			return 0, 0, false
		}
		peak := math.Inf(-1)
		for _, p := range ser.Points {
			if !math.IsNaN(p.Max) && p.Max > peak {
				peak = p.Max
			}
		}
		if name == host.SysRSS {
			m.Samples = ser.Total
		}
		return ser.Points[len(ser.Points)-1].Value, peak, true
	}
	if v, p, ok := last(host.SysCPU); ok {
		m.CPUPercent, m.PeakCPUPercent = v, p
	}
	if v, p, ok := last(host.SysRSS); ok {
		m.RSSBytes, m.PeakRSSBytes = uint64(v*(1<<20)), uint64(p*(1<<20))
	}
	if v, _, ok := last(host.SysRead); ok {
		m.ReadRate = v * (1 << 20)
	}
	if v, _, ok := last(host.SysWrite); ok {
		m.WriteRate = v * (1 << 20)
	}
	if v, _, ok := last(host.SysGPU); ok {
		m.GPUPercent = &v
	}
	if v, p, ok := last(host.SysGPUMem); ok {
		b, pb := uint64(v*(1<<20)), uint64(p*(1<<20))
		m.GPUMemBytes, m.PeakGPUMemory = &b, &pb
	}
	return m
}

func (s *server) diff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	a, b := q.Get("a"), q.Get("b")
	if a == "" || b == "" {
		writeError(w, fmt.Errorf("%w: diff needs two runs (a and b)", host.ErrBadRequest))
		return
	}
	d, err := s.eng.Diff(r.Context(), a, b)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, d)
}

// compare: run=NAME (repeatable), label=K=V (repeatable), sweep=ID, all_params=1,
// sort=COLUMN, filter=K=V (repeatable), goal=METRIC=min|max (repeatable),
// offset, limit.
func (s *server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cq := host.CompareQuery{Runs: q["run"], Sweep: q.Get("sweep")}
	var err error
	if cq.Labels, err = pairs(q["label"]); err == nil {
		cq.Filter, err = pairs(q["filter"])
	}
	var goals map[string]string
	if err == nil {
		goals, err = pairs(q["goal"])
	}
	if err != nil {
		writeError(w, err)
		return
	}
	for k, g := range goals {
		if g != string(record.Min) && g != string(record.Max) {
			writeError(w, fmt.Errorf("%w: goal %s=%s: want min or max", host.ErrBadRequest, k, g))
			return
		}
		if cq.Goals == nil {
			cq.Goals = map[string]record.Goal{}
		}
		cq.Goals[k] = record.Goal(g)
	}
	cq.AllParams = q.Get("all_params") == "1" || q.Get("all_params") == "true"
	cq.Sort = q.Get("sort")
	for _, f := range []struct {
		name string
		dst  *int
	}{{"offset", &cq.Offset}, {"limit", &cq.Limit}} {
		if v := q.Get(f.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				writeError(w, fmt.Errorf("%w: %s %q is not a count", host.ErrBadRequest, f.name, v))
				return
			}
			*f.dst = n
		}
	}
	c, err := s.eng.Compare(r.Context(), cq)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

func pairs(vs []string) (map[string]string, error) {
	if len(vs) == 0 {
		return nil, nil
	}
	m := map[string]string{}
	for _, kv := range vs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("%w: %q is not KEY=VALUE", host.ErrBadRequest, kv)
		}
		m[k] = v
	}
	return m, nil
}

// sysUnlessAsked leaves the machine's series (sys/) out of a run's metrics
// unless the request asks for them (sys=1, or a sys/ name): they are not
// the run's own, and charts, plots and sparklines of "the run's metrics"
// stay what they were.
func sysUnlessAsked(r *http.Request, names []string, h *store.MetricHistory, all []string) (*store.MetricHistory, []string) {
	if r.URL.Query().Get("sys") == "1" {
		return h, all
	}
	for _, n := range names {
		if strings.HasPrefix(n, host.SysPrefix) {
			return h, all
		}
	}
	own := &store.MetricHistory{RunID: h.RunID, Dropped: h.Dropped}
	for _, s := range h.Series {
		if !strings.HasPrefix(s.Name, host.SysPrefix) {
			own.Series = append(own.Series, s)
		}
	}
	var names2 []string
	for _, n := range all {
		if !strings.HasPrefix(n, host.SysPrefix) {
			names2 = append(names2, n)
		}
	}
	return own, names2
}

// withExperienceChanges adds to a plan's experience what its command's
// failures had that its successes did not.
func (s *server) withExperienceChanges(ctx context.Context, p *store.Plan, v *api.Plan) *api.Plan {
	if v.Experience != nil {
		v.Experience.Changes = s.eng.ExperienceChanges(ctx, p.Command)
	}
	return v
}
