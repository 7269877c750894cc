package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// defaultGrace is used when neither Stop nor the spec gives one.
const defaultGrace = 10 * time.Second

// backstop is how long past its grace a stopped container's init gets
// to write its exit record before Docker kills the container outright.
const backstop = 10 * time.Second

// handle is a run in a container. Everything but Wait's result lives in
// the container, its box and the state dir, so Recover can rebuild it.
type handle struct {
	sb   *Sandbox
	cli  *client.Client
	id   string
	spec sandbox.Spec
	st   *state
	box  string
	auto bool // Docker removes the container when it exits (AutoRemove)

	bg     context.Context // the run's own context, cancelled once it ended
	cancel context.CancelFunc
	done   chan struct{}
	exit   sandbox.Exit
	early  chan struct{} // closed once earlyExit is known
	earlyE sandbox.Exit
}

var _ sandbox.EarlyExiter = (*handle)(nil)

func (s *Sandbox) newHandle(cli *client.Client, id string, spec sandbox.Spec, st *state, box string, auto bool) *handle {
	bg, cancel := context.WithCancel(context.Background())
	return &handle{sb: s, cli: cli, id: id, spec: spec, st: st, box: box, auto: auto,
		bg: bg, cancel: cancel, done: make(chan struct{}), early: make(chan struct{})}
}

// doneHandle is a run that had ended before this process saw it.
func doneHandle(id string, e sandbox.Exit) *handle {
	h := &handle{id: id, exit: e, done: make(chan struct{}), early: make(chan struct{})}
	close(h.done)
	return h
}

// WaitEarly returns the exit record as soon as the container's init has
// written it (the log is on disk by then), while the container still
// shuts down and is removed: that is Docker's slowest part of a short
// run, and nothing of the run's result depends on it. A run that was
// SIGKILLed under a memory limit waits for Docker instead, since only
// Docker knows whether the OOM killer did it.
func (h *handle) WaitEarly(ctx context.Context) (sandbox.Exit, error) {
	select {
	case <-h.early:
		return h.earlyE, nil
	case <-h.done:
		return h.exit, nil
	case <-ctx.Done():
		return sandbox.Exit{}, ctx.Err()
	}
}

// watchRecord polls the box for the exit record: often at first (short
// runs are the ones whose latency shows), then less.
func (h *handle) watchRecord() {
	start := time.Now()
	for {
		d := 2 * time.Millisecond
		if since := time.Since(start); since > 10*time.Second {
			d = 100 * time.Millisecond
		} else if since > 500*time.Millisecond {
			d = 20 * time.Millisecond
		}
		select {
		case <-h.done:
			return
		case <-time.After(d):
		}
		e, err := supervisor.ReadExit(h.box)
		if err != nil {
			continue
		}
		if h.spec.Limits.MemoryBytes > 0 && e.Signal == "SIGKILL" {
			return
		}
		h.earlyE = e
		close(h.early)
		return
	}
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

// Stop asks the container's init to end the run (stop request in the
// box, then SIGTERM to it): it signals the whole tree, waits the grace,
// kills what is left and writes the exit record. Should the init not
// have ended backstop after the grace, Docker kills the container.
func (h *handle) Stop(ctx context.Context, grace time.Duration) error {
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
			r.StopReason = reasonCancelled
		}
	}); err != nil {
		return err
	}
	if err := supervisor.RequestStop(h.box, grace); err != nil {
		return fmt.Errorf("stop container: %w", err)
	}
	if err := h.cli.ContainerKill(ctx, h.id, "TERM"); err != nil && !cerrdefs.IsNotFound(err) && !isNotRunning(err) {
		return fmt.Errorf("stop container: %w", err)
	}
	t := time.NewTimer(grace + backstop)
	defer t.Stop()
	select {
	case <-h.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
	}
	if err := h.cli.ContainerKill(ctx, h.id, "KILL"); err != nil && !cerrdefs.IsNotFound(err) && !isNotRunning(err) {
		return fmt.Errorf("stop container: %w", err)
	}
	return nil
}

// isNotRunning is Docker's answer to a signal for a container that has
// just exited (a conflict in newer APIs, a plain error in older ones).
func isNotRunning(err error) bool {
	return cerrdefs.IsConflict(err) || err != nil && strings.Contains(err.Error(), "is not running")
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
	st := sandbox.Stats{
		RSSBytes:   rss(v.MemoryStats),
		CPUSeconds: float64(v.CPUStats.CPUUsage.TotalUsage) / 1e9,
		Pids:       int(v.PidsStats.Current),
	}
	st.ReadBytes, st.WriteBytes = blkio(v.BlkioStats) // inspect.go
	return st, nil
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
