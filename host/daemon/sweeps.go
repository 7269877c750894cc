package daemon

import (
	"net/http"

	"github.com/runbox/runbox/api"
)

// Sweeps (host/sweep.go): POST /v1/sweeps creates one and answers once
// every member is queued; the rest read, wait for and stop them.
func (s *server) sweepRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/sweeps", s.createSweep)
	mux.HandleFunc("GET /v1/sweeps", s.listSweeps)
	mux.HandleFunc("GET /v1/sweeps/{id}", s.getSweep)
	mux.HandleFunc("GET /v1/sweeps/{id}/wait", s.waitSweep)
	mux.HandleFunc("POST /v1/sweeps/{id}/stop", s.stopSweep)
}

func (s *server) createSweep(w http.ResponseWriter, r *http.Request) {
	var req api.SweepRequest
	if !readJSON(w, r, &req) {
		return
	}
	sw, err := s.eng.SubmitSweep(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	v, err := s.eng.SweepStatus(r.Context(), sw.ID, "")
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, v)
}

func (s *server) listSweeps(w http.ResponseWriter, r *http.Request) {
	l, err := s.eng.ListSweeps(r.Context())
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.SweepList{Sweeps: l})
}

func (s *server) getSweep(w http.ResponseWriter, r *http.Request) {
	v, err := s.eng.SweepStatus(r.Context(), r.PathValue("id"), r.URL.Query().Get("sort"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) waitSweep(w http.ResponseWriter, r *http.Request) {
	v, err := s.eng.WaitSweep(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *server) stopSweep(w http.ResponseWriter, r *http.Request) {
	v, err := s.eng.StopSweep(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}
