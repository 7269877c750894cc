package daemon

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/store"
)

// frameWriter writes framed records to an HTTP response, flushing as it goes.
type frameWriter struct {
	w   *bufio.Writer
	f   http.Flusher
	buf []byte
}

func newFrameWriter(w http.ResponseWriter) *frameWriter {
	w.Header().Set("Content-Type", api.ContentTypeLog)
	w.WriteHeader(http.StatusOK)
	f, _ := w.(http.Flusher)
	return &frameWriter{w: bufio.NewWriterSize(w, 256<<10), f: f}
}

func (fw *frameWriter) frame(stream uint8, t time.Time, data []byte) error {
	fw.buf = runlog.AppendFrame(fw.buf[:0], stream, t, data)
	_, err := fw.w.Write(fw.buf)
	return err
}

func (fw *frameWriter) json(stream uint8, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return fw.frame(stream, time.Now(), b)
}

func (fw *frameWriter) flush() error {
	if err := fw.w.Flush(); err != nil {
		return err
	}
	if fw.f != nil {
		fw.f.Flush()
	}
	return nil
}

// logs streams a run's log: GET /v1/runs/{id}/logs?follow=1&stream=stdout&tail=N
func (s *server) logs(w http.ResponseWriter, r *http.Request) {
	run, err := s.eng.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		writeError(w, err)
		return
	}
	q := r.URL.Query()
	var want map[runlog.Stream]bool
	for _, name := range q["stream"] {
		st, err := runlog.ParseStream(name)
		if err != nil {
			writeError(w, fmt.Errorf("%w: %v", host.ErrBadRequest, err))
			return
		}
		if want == nil {
			want = map[runlog.Stream]bool{}
		}
		want[st] = true
	}
	tail := -1
	if v := q.Get("tail"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, fmt.Errorf("%w: bad tail %q", host.ErrBadRequest, v))
			return
		}
		tail = n
	}
	skip := 0 // records to pass over first: a client resuming a stream
	if v := q.Get("skip"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			writeError(w, fmt.Errorf("%w: bad skip %q", host.ErrBadRequest, v))
			return
		}
		skip = n
	}
	follow := q.Get("follow") == "1" || q.Get("follow") == "true"
	path := run.Spec.LogPath
	if q.Get("smoke") == "1" {
		path = filepath.Join(filepath.Dir(path), "smoke", "output.log")
	}
	if _, err := os.Stat(path); err != nil && run.State.Terminal() {
		writeError(w, fmt.Errorf("%w: run %s has no log: %v", store.ErrNotFound, run.ID, err))
		return
	}
	fw := newFrameWriter(w)
	from := int64(0)
	if tail >= 0 {
		off, err := tailOffset(path, want, tail, fw)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("logs: tail", "run", run.ID, "err", err)
			return
		}
		from = off
	}
	var done <-chan struct{}
	if follow {
		done = s.eng.Done(run.ID)
	}
	if done == nil {
		closed := make(chan struct{})
		close(closed)
		done = closed
	}
	err = runlog.FollowShared(r.Context(), path, from, done, func(rec runlog.Record) error {
		if skip > 0 {
			skip--
			return nil
		}
		if want != nil && !want[rec.Stream] {
			return nil
		}
		if err := fw.frame(uint8(rec.Stream), rec.Time, rec.Data); err != nil {
			return err
		}
		return fw.flush()
	})
	if err == nil {
		_ = fw.flush()
	}
}

// tailOffset writes the part of the record holding the first of the last n
// lines (of the wanted streams) and returns the offset after it.
func tailOffset(path string, want map[runlog.Stream]bool, n int, fw *frameWriter) (int64, error) {
	var total int
	err := runlog.ReadAll(path, func(rec runlog.Record) error {
		if want == nil || want[rec.Stream] {
			total += bytes.Count(rec.Data, []byte{'\n'})
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	skip := total - n // newlines to pass before output starts
	if skip <= 0 {
		return 0, nil
	}
	var off int64
	seen := 0
	errStop := errors.New("stop")
	err = runlog.ReadAll(path, func(rec runlog.Record) error {
		if want != nil && !want[rec.Stream] {
			return nil
		}
		c := bytes.Count(rec.Data, []byte{'\n'})
		if seen+c < skip {
			seen += c
			return nil
		}
		// The skip-th newline is in this record: emit what follows it.
		data := rec.Data
		for seen < skip {
			i := bytes.IndexByte(data, '\n')
			data = data[i+1:]
			seen++
		}
		if len(data) > 0 {
			if err := fw.frame(uint8(rec.Stream), rec.Time, data); err != nil {
				return err
			}
		}
		off = rec.End
		return errStop
	})
	if err != nil && !errors.Is(err, errStop) {
		return 0, err
	}
	return off, nil
}

// attachSmoke streams the smoke run's output, marked as such
// (api.StreamSmokeStdout/Stderr), until the smoke run is over: the run has
// left the smoke state, or ended.
func (s *server) attachSmoke(ctx context.Context, fw *frameWriter, run *store.Run) error {
	done := make(chan struct{})
	go func() {
		defer close(done)
		seen := false
		for {
			cur, err := s.eng.Get(ctx, run.ID)
			if err != nil || cur.State.Terminal() || (seen && cur.State != store.Smoke) || cur.State == store.Running {
				return
			}
			seen = seen || cur.State == store.Smoke
			select {
			case <-ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	path := filepath.Join(filepath.Dir(run.Spec.LogPath), "smoke", "output.log")
	return runlog.FollowShared(ctx, path, 0, done, func(rec runlog.Record) error {
		stream := uint8(api.StreamSmokeStdout)
		switch rec.Stream {
		case runlog.Stdout:
		case runlog.Stderr:
			stream = api.StreamSmokeStderr
		default:
			return nil
		}
		if err := fw.frame(stream, rec.Time, rec.Data); err != nil {
			return err
		}
		return fw.flush()
	})
}

// progressFrameTick is how often an attach stream checks for progress that
// was published after the output it came from had been sent.
const progressFrameTick = 50 * time.Millisecond

// attach streams a just-created run: its record, its output and progress
// while it runs, then its final record.
func (s *server) attach(w http.ResponseWriter, r *http.Request, run *store.Run, smoke bool) {
	fw := newFrameWriter(w)
	if err := fw.json(api.StreamRun, runView(run)); err != nil || fw.flush() != nil {
		return
	}
	if smoke && s.attachSmoke(r.Context(), fw, run) != nil {
		return // client went away; the run goes on
	}
	done := s.eng.Done(run.ID)
	if done == nil {
		closed := make(chan struct{})
		close(closed)
		done = closed
	}
	// Output frames go out as the log grows; progress frames right after
	// the output they came from, and on a short tick as well, because the
	// runner may publish a line's progress a moment after the line was
	// sent. The two writers share the response under mu.
	var mu sync.Mutex
	var lastProg []byte
	sendProgress := func() error {
		p := s.eng.Progress(run.ID)
		if p == nil {
			return nil
		}
		b, _ := json.Marshal(progressView(p))
		if bytes.Equal(b, lastProg) {
			return nil
		}
		lastProg = b
		return fw.frame(api.StreamProgress, time.Now(), b)
	}
	ctx := r.Context()
	tickDone := make(chan struct{})
	ticked := make(chan struct{})
	go func() {
		defer close(ticked)
		t := time.NewTicker(progressFrameTick)
		defer t.Stop()
		for {
			select {
			case <-tickDone:
				return
			case <-ctx.Done():
				return
			case <-t.C:
				mu.Lock()
				if sendProgress() == nil {
					_ = fw.flush()
				}
				mu.Unlock()
			}
		}
	}()
	err := runlog.FollowShared(ctx, run.Spec.LogPath, 0, done, func(rec runlog.Record) error {
		mu.Lock()
		defer mu.Unlock()
		if err := fw.frame(uint8(rec.Stream), rec.Time, rec.Data); err != nil {
			return err
		}
		if err := sendProgress(); err != nil {
			return err
		}
		return fw.flush()
	})
	close(tickDone)
	<-ticked
	if err != nil {
		return // client went away; the run goes on
	}
	_ = sendProgress()
	final, err := s.eng.Wait(ctx, run.ID)
	if err != nil {
		return
	}
	_ = fw.json(api.StreamFinal, runView(final))
	_ = fw.flush()
}
