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

// logs streams a run's log: GET /v1/runs/{id}/logs?follow=1&stream=stdout&tail=N&tail_bytes=B
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
	// tail_bytes bounds a tail view by size as well: one 500 MB line is
	// one line.
	var tailBytes int64
	if v := q.Get("tail_bytes"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			writeError(w, fmt.Errorf("%w: bad tail_bytes %q", host.ErrBadRequest, v))
			return
		}
		tailBytes = n
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
	smokeOnly := false
	if q.Get("smoke") != "1" {
		path, smokeOnly = smokeFallback(path) // smokelog.go
	}
	if _, err := os.Stat(path); err != nil && run.State.Terminal() {
		writeError(w, fmt.Errorf("%w: run %s has no log: %v", store.ErrNotFound, run.ID, err))
		return
	}
	fw := newFrameWriter(w)
	if smokeOnly && (want == nil || want[runlog.Meta]) && skip == 0 {
		if err := fw.frame(uint8(runlog.Meta), run.CreatedAt, []byte(SmokeOnlyNote)); err != nil {
			return
		}
	}
	from := int64(0)
	if tail >= 0 || tailBytes > 0 {
		off, err := tailOffset(path, want, tail, tailBytes, fw)
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

// tailOffset writes the part of the log a tail view starts with and
// returns the offset after it. The view starts at the later of two
// points: the first of the last n lines (n < 0: no line bound) and the
// last maxBytes bytes (≤ 0: no byte bound), counting the wanted streams
// only. When the byte bound is the later one — a huge line, or many long
// ones — a meta record first says how much was cut, so a reader never
// takes a cut line for the whole.
func tailOffset(path string, want map[runlog.Stream]bool, n int, maxBytes int64, fw *frameWriter) (int64, error) {
	var lines int
	var size int64
	err := readShared(path, func(rec runlog.Record) error {
		if want == nil || want[rec.Stream] {
			lines += bytes.Count(rec.Data, []byte{'\n'})
			size += int64(len(rec.Data))
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	skip := 0 // newlines to pass before the line tail starts
	if n >= 0 {
		skip = max(lines-n, 0)
	}
	byteStart := int64(0)
	if maxBytes > 0 {
		byteStart = max(size-maxBytes, 0)
	}
	if skip == 0 && byteStart == 0 {
		return 0, nil
	}
	var off, pos int64 // pos: wanted bytes before rec
	lineStart := int64(-1)
	if skip == 0 {
		lineStart = 0
	}
	seen := 0
	errStop := errors.New("stop")
	err = readShared(path, func(rec runlog.Record) error {
		if want != nil && !want[rec.Stream] {
			return nil
		}
		data := rec.Data
		defer func() { pos += int64(len(rec.Data)) }()
		cut := 0 // where the view starts in data, once both points are reached
		if lineStart < 0 {
			if seen+bytes.Count(data, []byte{'\n'}) < skip {
				seen += bytes.Count(data, []byte{'\n'})
				return nil
			}
			for seen < skip { // the skip-th newline is in this record
				cut += bytes.IndexByte(data[cut:], '\n') + 1
				seen++
			}
			lineStart = pos + int64(cut)
		}
		end := pos + int64(len(data))
		if byteStart >= end && byteStart > lineStart {
			return nil
		}
		if byteStart > lineStart {
			cut = int(byteStart - pos)
			note := fmt.Sprintf("[runbox: %s of output cut here; this view shows the last %s]\n", sizeText(byteStart-lineStart), sizeText(maxBytes))
			if err := fw.frame(uint8(runlog.Meta), rec.Time, []byte(note)); err != nil {
				return err
			}
		}
		if cut < len(data) {
			if err := fw.frame(uint8(rec.Stream), rec.Time, data[cut:]); err != nil {
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

// readShared is runlog.ReadAll without an allocation per record: a tail
// of a 500 MB log reads it twice, and should not allocate it twice.
func readShared(path string, fn func(runlog.Record) error) error {
	closed := make(chan struct{})
	close(closed)
	return runlog.FollowShared(context.Background(), path, 0, closed, fn)
}

// sizeText is n bytes for a person: "512 bytes", "63.0 MiB".
func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
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
