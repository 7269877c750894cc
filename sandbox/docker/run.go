package docker

import (
	"context"
	"errors"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Start creates and starts the run's container. It returns once the
// container runs; setup commands, output copying and the timeout then go
// on in the background, and the container goes on even if this process
// dies (see Recover).
func (s *Sandbox) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	if spec.RunID == "" || spec.LogPath == "" {
		return nil, errors.New("docker start: spec needs a run id and a log path")
	}
	cli, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	ref := spec.Image
	if ref == "" {
		ref = s.opts.DefaultImage
	}
	img, err := ensureImage(ctx, cli, ref, s.opts.PullTimeout)
	if err != nil {
		return nil, err
	}
	if spec.GPUs != "" {
		ok, err := hasRuntime(ctx, cli, "nvidia")
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%w: %w: gpus %q requested but the docker daemon has no nvidia runtime; "+
				"install nvidia-container-toolkit and restart docker", sandbox.ErrUnavailable, ErrNoGPU, spec.GPUs)
		}
	}
	var entrypoint []string
	if img.Config != nil {
		entrypoint = img.Config.Entrypoint
	}
	p, err := buildPlan(spec, ref, entrypoint)
	if err != nil {
		return nil, fmt.Errorf("docker start: %w", err)
	}
	p.config.Labels[LabelHome] = s.opts.Home
	st, err := loadState(spec.StateDir)
	if err != nil {
		return nil, err
	}
	w, err := runlog.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	h, hj, err := s.create(ctx, cli, spec, p, st, w)
	if err != nil {
		w.Close()
		return nil, err
	}
	go h.run(p, hj)
	return h, nil
}

// create creates the container, attaches stdin if needed and starts it;
// on failure it removes the container again.
func (s *Sandbox) create(ctx context.Context, cli *client.Client, spec sandbox.Spec, p *plan, st *state, w *runlog.Writer) (*handle, *types.HijackedResponse, error) {
	created, err := cli.ContainerCreate(ctx, p.config, p.host, nil, nil, containerName(spec.RunID))
	if err != nil {
		if cerrdefs.IsConflict(err) {
			return nil, nil, fmt.Errorf("docker start: a container for run %s already exists: %w", spec.RunID, err)
		}
		return nil, nil, fmt.Errorf("docker create: %w", err)
	}
	id := created.ID
	var hj *types.HijackedResponse
	fail := func(err error) (*handle, *types.HijackedResponse, error) {
		if hj != nil {
			hj.Close()
		}
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		cli.ContainerRemove(rctx, id, container.RemoveOptions{Force: true})
		return nil, nil, err
	}
	if p.shell {
		if _, err := cli.ContainerStatPath(ctx, id, "/bin/sh"); err != nil {
			return fail(fmt.Errorf("docker start: image %s has no /bin/sh, which setup commands and shell mode need: %w", p.config.Image, err))
		}
	}
	phase := phaseMain
	if p.gated {
		phase = phaseSetup
	}
	if err := st.update(func(r *runState) { *r = runState{ContainerID: id, Phase: phase} }); err != nil {
		return fail(err)
	}
	if p.stdin {
		if hj, err = attachStdin(ctx, cli, id); err != nil {
			return fail(err)
		}
	}
	if err := cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return fail(fmt.Errorf("docker start: %w", err))
	}
	return s.newHandle(cli, id, spec, st, w), hj, nil
}

// run drives a started container to its end: setup and stdin, output,
// stats, the timeout, then the exit record and removal.
func (h *handle) run(p *plan, hj *types.HijackedResponse) {
	ctx := context.Background()
	logsDone := h.follow()
	h.sampleStats()
	h.armTimeout(time.Now())
	if hj != nil {
		prefix := ""
		if p.gated {
			code, err := runSetup(ctx, h.cli, h.id, p, h.spec, h.w)
			if err != nil {
				h.w.Write(runlog.Meta, []byte(err.Error()+"\n"))
				code = 125
			}
			if code != 0 {
				h.st.update(func(r *runState) { r.Phase, r.SetupCode = phaseSetupFailed, code })
				prefix = gateStop
			} else {
				h.st.update(func(r *runState) { r.Phase = phaseMain })
				prefix = gateGo
			}
		}
		// In the background: a command that never reads its stdin must not
		// hold up the end of the run; closing hj at the end unblocks it.
		go feedStdin(hj, prefix, h.spec, h.w)
		defer hj.Close()
	}
	h.finish(logsDone)
}
