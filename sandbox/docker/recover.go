package docker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// Recover re-attaches to a run whose daemon died. The container's init
// kept writing the run log and, at the end, its exit record into the box;
// Recover waits for the container as Start would have, then finishes the
// run. A run whose exit was already recorded is returned as ended; a run
// with neither a container nor an exit record is sandbox.ErrNotFound.
func (s *Sandbox) Recover(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	st, err := loadState(spec.StateDir)
	if err != nil {
		return nil, err
	}
	rs := st.get()
	if rs.Exit != nil {
		if cli, err := s.Client(); err == nil && !spec.KeepContainer && !s.opts.KeepContainers && rs.ContainerID != "" {
			cli.ContainerRemove(ctx, rs.ContainerID, container.RemoveOptions{Force: true})
		}
		return doneHandle(rs.ContainerID, *rs.Exit), nil
	}
	cli, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	box := rs.Box
	if box == "" {
		box = filepath.Join(spec.StateDir, "box")
	}
	id := rs.ContainerID
	if id == "" {
		found, err := findRun(ctx, cli, spec.RunID)
		if err != nil {
			return nil, err
		}
		if len(found) > 0 {
			id = found[0].ID
		}
	}
	if id == "" {
		return nil, fmt.Errorf("%w: no container labelled %s=%s", sandbox.ErrNotFound, LabelRunID, spec.RunID)
	}
	auto := false
	if c, err := cli.ContainerInspect(ctx, id); err != nil {
		if _, rerr := supervisor.ReadExit(box); rerr != nil {
			return nil, fmt.Errorf("%w: container %s of run %s is gone and no exit was recorded", sandbox.ErrNotFound, short(id), spec.RunID)
		}
	} else if c.HostConfig != nil {
		auto = c.HostConfig.AutoRemove
	}
	if rs.ContainerID == "" {
		st.update(func(r *runState) { r.ContainerID, r.Box = id, box })
	}
	h := s.newHandle(cli, id, spec, st, box, auto)
	go h.run()
	go h.watchRecord()
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
// crash, kept containers of old runs, and warm containers no pool of this
// process holds. Other homes' containers stay.
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
		if c.Labels[LabelHome] != s.opts.Home || s.live.has(c.ID) {
			continue
		}
		// A warm container never handed a run belongs to no run: only the
		// pool that made it (live) keeps it.
		run := runOf(c.Labels)
		if (run != "" || c.Labels[LabelPoolBox] == "") && known(run) {
			continue
		}
		if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
			errs = append(errs, err)
			continue
		}
		if box := c.Labels[LabelPoolBox]; box != "" && filepath.Dir(box) == s.opts.PoolDir {
			os.RemoveAll(box) // a run's log in it is only a link
		}
		n++
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("sweep: %d containers not removed: %w", len(errs), errs[0])
	}
	return n, nil
}

// runOf is the run a container serves: its label, or for a pooled
// container the run written into its box when it was handed one ("" for
// one never handed a run).
func runOf(labels map[string]string) string {
	if id := labels[LabelRunID]; id != "" {
		return id
	}
	if box := labels[LabelPoolBox]; box != "" {
		if b, err := os.ReadFile(filepath.Join(box, runIDFile)); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	return ""
}
