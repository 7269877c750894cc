package daemon

import (
	"fmt"
	"math"
	"net/http"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/store"
)

// metrics serves a run's metric history. A run with no metrics answers an
// empty list (the caller says so); a name it does not have is a bad request
// that lists the names it has.
func (s *server) metrics(w http.ResponseWriter, r *http.Request) {
	names := r.URL.Query()["name"]
	run, h, err := s.eng.Metrics(r.Context(), r.PathValue("id"), names...)
	if err != nil {
		writeError(w, err)
		return
	}
	all, err := s.eng.MetricNames(r.Context(), run.ID)
	if err != nil {
		writeError(w, err)
		return
	}
	h, all = sysUnlessAsked(r, names, h, all) // record.go
	for _, n := range names {
		if h.Get(n) == nil {
			have := "none"
			if len(all) > 0 {
				have = strings.Join(all, ", ")
			}
			writeError(w, fmt.Errorf("%w: run %s has no metric %q (it has: %s)", host.ErrBadRequest, run.ID, n, have))
			return
		}
	}
	writeJSON(w, http.StatusOK, metricsView(run, h, all))
}

func metricsView(run *store.Run, h *store.MetricHistory, all []string) api.Metrics {
	out := api.Metrics{RunID: run.ID, ShortID: run.Short, State: string(run.State), Names: all, Series: []api.MetricSeries{}, Dropped: h.Dropped}
	if out.Names == nil {
		out.Names = []string{}
	}
	for _, s := range h.Series {
		ms := api.MetricSeries{
			Name: s.Name, Total: s.Total, Span: s.Span,
			Step: make([]int64, len(s.Points)), Time: make([]float64, len(s.Points)),
			Value: make([]api.Float, len(s.Points)), Min: make([]*float64, len(s.Points)), Max: make([]*float64, len(s.Points)),
		}
		for i, p := range s.Points {
			ms.Step[i] = p.Step
			ms.Time[i] = float64(p.Time.UnixMilli()) / 1000
			ms.Value[i], ms.Min[i], ms.Max[i] = api.Float(p.Value), num(p.Min), num(p.Max)
			if p.NonFinite > 0 && ms.NonFinite == nil {
				ms.NonFinite = make([]int64, len(s.Points))
			}
			if ms.NonFinite != nil {
				ms.NonFinite[i] = p.NonFinite
			}
		}
		out.Series = append(out.Series, ms)
	}
	return out
}

// num is a bucket's extreme: null when the bucket has no finite sample.
func num(v float64) *float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return nil
	}
	return &v
}
