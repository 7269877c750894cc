package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Recover re-attaches to a run whose daemon died. The container kept
// running and kept its output in the log driver; Recover rebuilds the
// copy cursor from the run log at spec.LogPath (see logs.go) and goes on
// copying from there, then finishes the run as Start would have. A run
// whose exit was already recorded is returned as ended; a run with
// neither a container nor a recorded exit is sandbox.ErrNotFound.
func (s *Sandbox) Recover(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	st, err := loadState(spec.StateDir)
	if err != nil {
		return nil, err
	}
	if rs := st.get(); rs.Exit != nil {
		if cli, err := s.Client(); err == nil && !spec.KeepContainer && !s.opts.KeepContainers && rs.ContainerID != "" {
			cli.ContainerRemove(ctx, rs.ContainerID, container.RemoveOptions{Force: true})
		}
		return doneHandle(rs.ContainerID, *rs.Exit), nil
	}
	cli, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	found, err := findRun(ctx, cli, spec.RunID)
	if err != nil {
		return nil, err
	}
	if len(found) == 0 {
		if id := st.get().ContainerID; id != "" {
			return nil, fmt.Errorf("%w: container %s of run %s is gone and no exit was recorded", sandbox.ErrNotFound, short(id), spec.RunID)
		}
		return nil, fmt.Errorf("%w: no container labelled %s=%s", sandbox.ErrNotFound, LabelRunID, spec.RunID)
	}
	c, err := cli.ContainerInspect(ctx, found[0].ID)
	if err != nil {
		return nil, fmt.Errorf("inspect container: %w", err)
	}
	if st.get().ContainerID == "" {
		// No state dir (or lost): what the container is doing tells enough.
		st.update(func(r *runState) { r.ContainerID, r.Phase = c.ID, phaseMain })
	}
	cur, err := cursorFromLog(spec.LogPath)
	if err != nil {
		return nil, err
	}
	w, err := runlog.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	h := s.newHandle(cli, c.ID, spec, st, w)
	h.cur = cur
	if st.get().Phase == phaseSetup && c.State != nil && c.State.Running {
		// The gate lost its stdin with the old daemon and is on its way
		// out; make sure, since nothing can release it now.
		cli.ContainerKill(ctx, c.ID, "KILL")
	}
	started := time.Now()
	if c.State != nil {
		if t, err := time.Parse(time.RFC3339Nano, c.State.StartedAt); err == nil && !t.IsZero() {
			started = t
		}
	}
	go func() {
		logsDone := h.follow()
		h.sampleStats()
		h.armTimeout(started)
		h.finish(logsDone)
	}()
	return h, nil
}

func findRun(ctx context.Context, cli *client.Client, runID string) ([]container.Summary, error) {
	cs, err := cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", LabelRunID+"="+runID)),
	})
	if err != nil {
		return nil, fmt.Errorf("list containers: %w", err)
	}
	return cs, nil
}

// Sweep removes the containers this home's runbox created (LabelHome is
// Options.Home) for runs that known says are no longer live: orphans of a
// crash, or kept containers of old runs. Other homes' containers stay.
func (s *Sandbox) Sweep(ctx context.Context, known func(runID string) bool) (int, error) {
	cli, err := s.ready(ctx)
	if err != nil {
		return 0, err
	}
	cs, err := cli.ContainerList(ctx, container.ListOptions{
		All:     true,
		Filters: filters.NewArgs(filters.Arg("label", LabelManaged+"=true")),
	})
	if err != nil {
		return 0, fmt.Errorf("list containers: %w", err)
	}
	n := 0
	var errs []error
	for _, c := range cs {
		if c.Labels[LabelHome] != s.opts.Home || known(c.Labels[LabelRunID]) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("sweep: %d containers not removed: %w", len(errs), errs[0])
	}
	return n, nil
}
