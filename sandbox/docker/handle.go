package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// defaultGrace is used when neither Stop nor the spec gives one.
const defaultGrace = 10 * time.Second

// handle is a run in a container. Everything but Wait's result lives in
// the container and the state dir, so a handle can be rebuilt by Recover.
type handle struct {
	sb   *Sandbox
	cli  *client.Client
	id   string
	spec sandbox.Spec
	st   *state
	w    *runlog.Writer
	cur  *cursor

	bg     context.Context // the run's own context, cancelled once it ended
	cancel context.CancelFunc
	done   chan struct{}
	exit   sandbox.Exit

	mu    sync.Mutex
	peak  uint64  // highest memory use sampled
	cpu   float64 // CPU seconds at the last sample
	timer *time.Timer
}

func (s *Sandbox) newHandle(cli *client.Client, id string, spec sandbox.Spec, st *state, w *runlog.Writer) *handle {
	bg, cancel := context.WithCancel(context.Background())
	return &handle{sb: s, cli: cli, id: id, spec: spec, st: st, w: w, cur: &cursor{},
		bg: bg, cancel: cancel, done: make(chan struct{})}
}

// doneHandle is a run that had ended before this process saw it.
func doneHandle(id string, e sandbox.Exit) *handle {
	h := &handle{id: id, exit: e, done: make(chan struct{})}
	close(h.done)
	return h
}

func (h *handle) Ref() string { return h.id }

func (h *handle) Wait(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-h.done:
		return h.exit, nil
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
}

func (h *handle) Stop(ctx context.Context, grace time.Duration) error {
	return h.stop(ctx, reasonCancelled, grace)
}

// stop records why the run is ending, then stops the container: the stop
// signal to its init, grace, then SIGKILL, which ends every process in it.
func (h *handle) stop(ctx context.Context, reason string, grace time.Duration) error {
	select {
	case <-h.done:
		return nil
	default:
	}
	if grace <= 0 {
		grace = h.spec.Grace
	}
	if grace <= 0 {
		grace = defaultGrace
	}
	if err := h.st.update(func(r *runState) {
		if r.StopReason == "" {
			r.StopReason = reason
		}
	}); err != nil {
		return err
	}
	secs := int(math.Ceil(grace.Seconds()))
	err := h.cli.ContainerStop(ctx, h.id, container.StopOptions{Timeout: &secs})
	if err != nil && !cerrdefs.IsNotFound(err) {
		if kerr := h.cli.ContainerKill(ctx, h.id, "KILL"); kerr != nil && !cerrdefs.IsNotFound(kerr) {
			return fmt.Errorf("stop container: %w", errors.Join(err, kerr))
		}
	}
	return nil
}

func (h *handle) Stats(ctx context.Context) (sandbox.Stats, error) {
	select {
	case <-h.done:
		return sandbox.Stats{}, errors.New("run has ended")
	default:
	}
	resp, err := h.cli.ContainerStatsOneShot(ctx, h.id)
	if err != nil {
		return sandbox.Stats{}, fmt.Errorf("container stats: %w", err)
	}
	defer resp.Body.Close()
	var v container.StatsResponse
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return sandbox.Stats{}, fmt.Errorf("container stats: %w", err)
	}
	if v.PidsStats.Current == 0 && v.MemoryStats.Usage == 0 {
		return sandbox.Stats{}, errors.New("container stats: container is not running")
	}
	return sandbox.Stats{
		RSSBytes:   rss(v.MemoryStats),
		CPUSeconds: float64(v.CPUStats.CPUUsage.TotalUsage) / 1e9,
		Pids:       int(v.PidsStats.Current),
	}, nil
}

// rss is memory use without the page cache, as docker stats shows it.
func rss(m container.MemoryStats) uint64 {
	cache := m.Stats["total_inactive_file"] // cgroup v1
	if v, ok := m.Stats["inactive_file"]; ok {
		cache = v // cgroup v2
	}
	if cache > m.Usage {
		return m.Usage
	}
	return m.Usage - cache
}

// sampleStats keeps the peak memory and CPU time from Docker's stream of
// stats (one a second) for the exit record's usage.
func (h *handle) sampleStats() {
	go func() {
		resp, err := h.cli.ContainerStats(h.bg, h.id, true)
		if err != nil {
			return
		}
		defer resp.Body.Close()
		dec := json.NewDecoder(resp.Body)
		for {
			var v container.StatsResponse
			if err := dec.Decode(&v); err != nil {
				return
			}
			h.mu.Lock()
			h.peak = max(h.peak, v.MemoryStats.MaxUsage, rss(v.MemoryStats))
			if c := float64(v.CPUStats.CPUUsage.TotalUsage) / 1e9; c > 0 {
				h.cpu = c
			}
			h.mu.Unlock()
		}
	}()
}

// armTimeout ends the run spec.Timeout after start.
func (h *handle) armTimeout(start time.Time) {
	if h.spec.Timeout <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.timer = time.AfterFunc(time.Until(start.Add(h.spec.Timeout)), func() {
		h.w.Write(runlog.Meta, fmt.Appendf(nil, "timed out after %s\n", h.spec.Timeout))
		if err := h.stop(h.bg, reasonTimedOut, h.spec.Grace); err != nil {
			h.w.Write(runlog.Meta, fmt.Appendf(nil, "timeout: %v\n", err))
		}
	})
}

// follow copies output while the container runs; the channel closes when
// the container has stopped (or is gone).
func (h *handle) follow() <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			err := copyLogs(h.bg, h.cli, h.id, true, h.w, h.cur)
			if err == nil {
				return
			}
			c, ierr := h.cli.ContainerInspect(h.bg, h.id)
			if ierr != nil || c.State == nil || !c.State.Running {
				return
			}
			select { // the daemon hiccupped: resume where the cursor is
			case <-h.bg.Done():
				return
			case <-time.After(200 * time.Millisecond):
			}
		}
	}()
	return done
}
