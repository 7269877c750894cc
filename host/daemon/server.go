// Package daemon serves the engine over HTTP+JSON on a unix socket and
// owns the daemon's lifetime: the socket, the store, recovery at start and
// exit after an idle period with no active runs.
package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/store"
)

// server holds the HTTP handlers.
type server struct {
	eng      *host.Engine
	log      *slog.Logger
	version  string
	home     string
	started  time.Time
	damage   *api.StoreDamage // the store was found damaged (see openStore)
	lastSeen atomic.Int64     // unix nanos of the last request, for idle exit
	inflight atomic.Int64
}

func (s *server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/health", s.health)
	mux.HandleFunc("GET /v1/backends", s.backends)
	mux.HandleFunc("POST /v1/plans", s.plan)
	mux.HandleFunc("GET /v1/plans/{id}", s.getPlan)
	mux.HandleFunc("POST /v1/runs", s.createRun)
	mux.HandleFunc("GET /v1/runs", s.listRuns)
	mux.HandleFunc("GET /v1/runs/{id}", s.getRun)
	mux.HandleFunc("POST /v1/runs/{id}/stop", s.stopRun)
	mux.HandleFunc("GET /v1/runs/{id}/wait", s.waitRun)
	mux.HandleFunc("POST /v1/runs/{id}/retry", s.retryRun)
	mux.HandleFunc("GET /v1/runs/{id}/events", s.events)
	mux.HandleFunc("GET /v1/runs/{id}/logs", s.logs)
	mux.HandleFunc("GET /v1/runs/{id}/metrics", s.metrics)
	s.sweepRoutes(mux)  // sweeps.go
	s.recordRoutes(mux) // record.go: diff, compare
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.inflight.Add(1)
		s.lastSeen.Store(time.Now().UnixNano())
		defer func() {
			s.inflight.Add(-1)
			s.lastSeen.Store(time.Now().UnixNano())
		}()
		mux.ServeHTTP(w, r)
	})
}

func (s *server) health(w http.ResponseWriter, r *http.Request) {
	active, queued := s.eng.Counts()
	writeJSON(w, http.StatusOK, api.Health{
		Version: s.version, PID: os.Getpid(), StartedAt: s.started,
		Active: active, Queued: queued, Home: s.home, Store: s.damage,
	})
}

func (s *server) backends(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, s.eng.Backends(r.Context()))
}

func (s *server) plan(w http.ResponseWriter, r *http.Request) {
	var req api.RunRequest
	if !readJSON(w, r, &req) {
		return
	}
	p, err := s.eng.Plan(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, s.withExperienceChanges(r.Context(), p, planView(p, s.eng.IsolationView(p)))) // record.go
}

func (s *server) getPlan(w http.ResponseWriter, r *http.Request) {
	p, err := s.engStore().GetPlan(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, s.withExperienceChanges(r.Context(), p, planView(p, s.eng.IsolationView(p)))) // record.go
}

func (s *server) createRun(w http.ResponseWriter, r *http.Request) {
	var req api.RunRequest
	if !readJSON(w, r, &req) {
		return
	}
	run, err := s.eng.Submit(r.Context(), req)
	if err != nil {
		writeError(w, err)
		return
	}
	if !req.Attach {
		writeJSON(w, http.StatusCreated, runView(run))
		return
	}
	s.attach(w, r, run, req.Smoke)
}

func (s *server) retryRun(w http.ResponseWriter, r *http.Request) {
	var req api.RunRequest
	if r.ContentLength != 0 && !readJSON(w, r, &req) {
		return
	}
	run, err := s.eng.Retry(r.Context(), r.PathValue("id"), req)
	if err != nil {
		writeError(w, err)
		return
	}
	if req.Attach {
		s.attach(w, r, run, req.Smoke)
		return
	}
	writeJSON(w, http.StatusCreated, runView(run))
}

func (s *server) listRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.Filter{ParentID: q.Get("parent"), PlanID: q.Get("plan")}
	if f.ParentID != "" {
		// A parent is named as any run is: by id or unique prefix.
		parent, err := s.eng.Get(r.Context(), f.ParentID)
		if err != nil {
			writeError(w, err)
			return
		}
		f.ParentID = parent.ID
	}
	for _, st := range q["state"] {
		for _, one := range strings.Split(st, ",") {
			state := store.State(strings.TrimSpace(one))
			if !state.Valid() {
				writeError(w, fmt.Errorf("%w: unknown state %q", host.ErrBadRequest, one))
				return
			}
			f.States = append(f.States, state)
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, fmt.Errorf("%w: bad limit %q", host.ErrBadRequest, v))
			return
		}
		f.Limit = n
	}
	if v := q.Get("since"); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			writeError(w, fmt.Errorf("%w: bad since %q: %v", host.ErrBadRequest, v, err))
			return
		}
		f.Since = t
	}
	runs, err := s.eng.List(r.Context(), f)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.RunList{Runs: runViews(runs)})
}

func (s *server) getRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.eng.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	v := runView(run)
	s.withRecord(r.Context(), run, v) // record.go
	writeJSON(w, http.StatusOK, v)
}

func (s *server) stopRun(w http.ResponseWriter, r *http.Request) {
	var grace time.Duration
	if v := r.URL.Query().Get("grace"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			writeError(w, fmt.Errorf("%w: bad grace %q", host.ErrBadRequest, v))
			return
		}
		grace = d
	}
	run, err := s.eng.Stop(r.Context(), r.PathValue("id"), grace)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, runView(run))
}

func (s *server) waitRun(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if v := r.URL.Query().Get("timeout"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			writeError(w, fmt.Errorf("%w: bad timeout %q", host.ErrBadRequest, v))
			return
		}
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	run, err := s.eng.Wait(ctx, r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, runView(run))
}

func (s *server) events(w http.ResponseWriter, r *http.Request) {
	after, _ := strconv.ParseUint(r.URL.Query().Get("after"), 10, 64)
	ev, err := s.eng.Events(r.Context(), r.PathValue("id"), after)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, api.EventList{Events: eventViews(ev)})
}

func (s *server) engStore() *store.Store { return s.eng.Store() }

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, fmt.Errorf("%w: bad request body: %v", host.ErrBadRequest, err))
		return false
	}
	return true
}

// writeJSON answers v with code. v is encoded before anything is sent: a
// value JSON cannot hold (a NaN, say) is a 500 naming what failed, never
// a 200 with an empty body (which clients read as "EOF").
func writeJSON(w http.ResponseWriter, code int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		b, _ := json.Marshal(api.Error{Code: api.CodeInternal,
			Error: fmt.Sprintf("the daemon could not encode its answer (%T): %v; this is a bug in runbox, please report it", v, err)})
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write(append(b, '\n'))
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(buf.Bytes())
}

func writeError(w http.ResponseWriter, err error) {
	code, kind := http.StatusInternalServerError, api.CodeInternal
	switch {
	case errors.Is(err, store.ErrNotFound):
		code, kind = http.StatusNotFound, api.CodeNotFound
	case errors.Is(err, store.ErrAmbiguous):
		code, kind = http.StatusConflict, api.CodeAmbiguous
	case errors.Is(err, host.ErrBadRequest), errors.Is(err, store.ErrInvalidTransition):
		code, kind = http.StatusBadRequest, api.CodeBadRequest
	case errors.Is(err, store.ErrDiskFull):
		code, kind = http.StatusInsufficientStorage, api.CodeDiskFull
	case errors.Is(err, host.ErrClosed):
		code, kind = http.StatusServiceUnavailable, api.CodeUnavailable
	}
	writeJSON(w, code, api.Error{Error: err.Error(), Code: kind})
}
