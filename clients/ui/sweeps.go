package ui

import (
	"net/http"
)

// Sweeps (host/sweep.go): the list, and one sweep with its member table;
// the page fetches each member's metrics itself to overlay their curves.
func (s *Server) sweepRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/sweeps", func(w http.ResponseWriter, r *http.Request) {
		l, err := s.c.Sweeps(r.Context())
		reply(w, map[string]any{"sweeps": l}, err)
	})
	mux.HandleFunc("GET /api/sweeps/{id}", func(w http.ResponseWriter, r *http.Request) {
		sw, err := s.c.Sweep(r.Context(), r.PathValue("id"), r.URL.Query().Get("sort"))
		reply(w, sw, err)
	})
}
