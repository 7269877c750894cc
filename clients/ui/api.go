package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// The page's API: thin views over the daemon's, plus an event stream.
func (s *Server) apiRoutes(ctx context.Context, mux *http.ServeMux) {
	mux.HandleFunc("GET /api/runs", s.listRuns)
	mux.HandleFunc("GET /api/runs/{id}", s.getRun)
	mux.HandleFunc("GET /api/runs/{id}/metrics", s.metrics)
	mux.HandleFunc("GET /api/runs/{id}/log", s.log)
	mux.HandleFunc("POST /api/runs/{id}/stop", s.stop)
	mux.HandleFunc("POST /api/runs/{id}/retry", s.retry)
	s.sweepRoutes(mux) // sweeps.go
	mux.HandleFunc("GET /api/stream", func(w http.ResponseWriter, r *http.Request) { s.stream(ctx, w, r) })
	s.recordRoutes(mux) // record.go
}

// RunList is the runs list: newest first, filtered.
type RunList struct {
	Runs []*api.Run `json:"runs"`
}

// RunPage is what the run page shows besides metrics and log.
type RunPage struct {
	Run     *api.Run   `json:"run"`
	Retries []*api.Run `json:"retries"`
	Plan    *api.Plan  `json:"plan,omitempty"`
}

// LogLine is one record of the log tail; S is the stream (1 stdout,
// 2 stderr, 3/4 setup, 5 runbox's notes).
type LogLine struct {
	S uint8  `json:"s"`
	T string `json:"t"`
}

func (s *Server) runs(ctx context.Context, q url.Values) (*RunList, error) {
	limit := 200
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 || n > 10000 {
			return nil, &client.Error{Status: 400, Code: "bad_request", Msg: fmt.Sprintf("bad limit %q", v)}
		}
		limit = n
	}
	text := strings.ToLower(strings.TrimSpace(q.Get("q")))
	dq := url.Values{"limit": {strconv.Itoa(limit)}}
	if text != "" {
		dq.Set("limit", strconv.Itoa(limit*10)) // the daemon does not filter by text
	}
	if st := q.Get("state"); st != "" {
		dq.Set("state", st)
	}
	runs, err := s.c.List(ctx, dq)
	if err != nil {
		return nil, err
	}
	out := &RunList{Runs: []*api.Run{}}
	for _, r := range runs {
		if text != "" && !matchText(r, text) {
			continue
		}
		if len(out.Runs) == limit {
			break
		}
		out.Runs = append(out.Runs, r)
	}
	return out, nil
}

func (s *Server) listRuns(w http.ResponseWriter, r *http.Request) {
	l, err := s.runs(r.Context(), r.URL.Query())
	reply(w, l, err)
}

func (s *Server) page(ctx context.Context, id string) (*RunPage, error) {
	run, err := s.c.Get(ctx, id)
	if err != nil {
		return nil, err
	}
	slimRecord(run) // record.go
	p := &RunPage{Run: run, Retries: []*api.Run{}}
	if kids, err := s.c.List(ctx, url.Values{"parent": {run.ID}}); err == nil {
		p.Retries = kids
	}
	if run.PlanID != "" {
		if plan, err := s.c.GetPlan(ctx, run.PlanID); err == nil {
			p.Plan = plan
		}
	}
	return p, nil
}

func (s *Server) getRun(w http.ResponseWriter, r *http.Request) {
	p, err := s.page(r.Context(), r.PathValue("id"))
	reply(w, p, err)
}

func (s *Server) metrics(w http.ResponseWriter, r *http.Request) {
	m, err := s.c.Metrics(r.Context(), r.PathValue("id"), r.URL.Query()["name"]...)
	reply(w, m, err)
}

// MaxLogView bounds the log a run page shows: the last 400 lines, and no
// more than this many bytes of them. A run that printed one 500 MB line
// made the dashboard hold and send all of it.
const MaxLogView = 1 << 20

func (s *Server) log(w http.ResponseWriter, r *http.Request) {
	tail := "400"
	if v := r.URL.Query().Get("tail"); v != "" {
		tail = v
	}
	q := url.Values{"tail": {tail}, "tail_bytes": {strconv.Itoa(MaxLogView)}}
	lines := []LogLine{}
	// The daemon keeps to tail_bytes; the budget holds against one that
	// does not (an older daemon), with a frame's worth of slack for the
	// cut marker.
	budget := MaxLogView + 4<<10
	errFull := errors.New("full")
	err := s.c.Logs(r.Context(), r.PathValue("id"), q, func(f client.Frame) error {
		if len(f.Data) > budget {
			lines = append(lines, LogLine{S: 5, T: fmt.Sprintf("[runbox: the log view stops here: more than %d KiB]\n", MaxLogView>>10)})
			return errFull
		}
		budget -= len(f.Data)
		lines = append(lines, LogLine{S: f.Stream, T: string(f.Data)})
		return nil
	})
	if errors.Is(err, errFull) {
		err = nil
	}
	reply(w, map[string]any{"lines": lines}, err)
}

func (s *Server) stop(w http.ResponseWriter, r *http.Request) {
	run, err := s.c.Stop(r.Context(), r.PathValue("id"), 0)
	reply(w, run, err)
}

func (s *Server) retry(w http.ResponseWriter, r *http.Request) {
	run, err := s.c.Retry(r.Context(), r.PathValue("id"), api.RunRequest{})
	reply(w, run, err)
}

func reply(w http.ResponseWriter, v any, err error) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	if err != nil {
		code := http.StatusBadGateway
		var ce *client.Error
		if errors.As(err, &ce) && ce.Status >= 400 {
			code = ce.Status
		}
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(api.Error{Error: err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

// stream pushes changes as Server-Sent Events: "runs" (the list, with the
// page's filter) and, with ?run=ID, "run" (the run page) and "metrics".
// The server asks the daemon every Poll over its socket; an event goes out
// only when what it carries changed.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, r *http.Request) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl.Flush()
	q := r.URL.Query()
	runID := q.Get("run")
	last := map[string][]byte{}
	send := func(name string, v any) bool {
		b, err := json.Marshal(v)
		if err != nil || bytes.Equal(last[name], b) {
			return err == nil
		}
		last[name] = b
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %s\n\n", name, b); err != nil {
			return false
		}
		fl.Flush()
		return true
	}
	t := time.NewTicker(s.o.Poll)
	defer t.Stop()
	keep := time.NewTicker(15 * time.Second)
	defer keep.Stop()
	for {
		rctx := r.Context()
		if runID == "" {
			if l, err := s.runs(rctx, q); err == nil && !send("runs", l) {
				return
			}
		} else {
			p, err := s.page(rctx, runID)
			if err == nil {
				if !send("run", p) {
					return
				}
				if m, err := s.c.Metrics(rctx, p.Run.ID); err == nil && !send("metrics", m) {
					return
				}
			}
		}
		select {
		case <-rctx.Done():
			return
		case <-ctx.Done():
			return
		case <-keep.C:
			if _, err := fmt.Fprint(w, ": keep-alive\n\n"); err != nil {
				return
			}
			fl.Flush()
		case <-t.C:
		}
	}
}

// matchText reports whether the runs list's filter text matches r. A
// number is a run's number, whole ("4" is run 4, not every run with a 4
// in its id or command); other text is looked for in the id, name and
// command.
func matchText(r *api.Run, text string) bool {
	if text[0] >= '1' && text[0] <= '9' && strings.Trim(text, "0123456789") == "" {
		return r.ShortID == text
	}
	return strings.Contains(strings.ToLower(r.ID+" "+r.Name+" "+strings.Join(r.Spec.Command, " ")), text)
}
