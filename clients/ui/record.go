package ui

import (
	"net/http"

	"github.com/runbox/runbox/api"
)

// What ran and what changed, for the page: the machine's series of a run,
// runs compared side by side, two runs diffed. Thin views over the
// daemon's (GET /v1/compare, /v1/diff, metrics?sys=1); record.js draws them.
func (s *Server) recordRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/runs/{id}/sys", s.sysMetrics)
	mux.HandleFunc("GET /api/compare", s.compare)
	mux.HandleFunc("GET /api/diff", s.diff)
}

// sysMetrics returns only the machine's series (sys/) of a run.
func (s *Server) sysMetrics(w http.ResponseWriter, r *http.Request) {
	m, err := s.c.MetricsWithSys(r.Context(), r.PathValue("id"))
	if err == nil {
		own := m.Series[:0]
		for _, ser := range m.Series {
			if len(ser.Name) > 4 && ser.Name[:4] == "sys/" {
				own = append(own, ser)
			}
		}
		m.Series = own
		if m.Series == nil {
			m.Series = []api.MetricSeries{}
		}
	}
	reply(w, m, err)
}

// compare passes the page's query on: run, label, sweep, filter, goal,
// all_params, sort, offset, limit.
func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	c, err := s.c.Compare(r.Context(), r.URL.Query())
	reply(w, c, err)
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	d, err := s.c.Diff(r.Context(), q.Get("a"), q.Get("b"))
	reply(w, d, err)
}

// slimRecord drops the uncommitted diff's text from a run's record: the
// page shows which files it touches, and the page is sent again on every
// change (up to 1 MiB each time otherwise). `runbox status --json` has it.
func slimRecord(r *api.Run) {
	if r.Record != nil && r.Record.Code != nil && r.Record.Code.Diff != "" {
		c := *r.Record.Code
		c.Diff = ""
		rec := *r.Record
		rec.Code = &c
		r.Record = &rec
	}
}
