package docker

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
)

// Start creates and starts the run's container, or hands the run to a
// warm one from the pool. It returns once the container's init has the
// run; the init then owns it (setup, output, timeout, exit record) and
// goes on even if this process dies (see Recover).
func (s *Sandbox) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	if spec.RunID == "" || spec.LogPath == "" {
		return nil, errors.New("docker start: spec needs a run id and a log path")
	}
	cli, err := s.ready(ctx)
	if err != nil {
		return nil, err
	}
	if spec.StateDir == "" {
		return nil, errors.New("docker start: spec needs a state dir (the container's box is in it)")
	}
	ref := spec.Image
	if ref == "" {
		ref = s.opts.DefaultImage
	}
	img, err := s.image(ctx, cli, ref)
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
	if err := s.initReady(); err != nil {
		return nil, fmt.Errorf("%w: docker start: %w", sandbox.ErrUnavailable, err)
	}
	var entrypoint []string
	if img.Config != nil {
		entrypoint = img.Config.Entrypoint
	}
	p, err := buildPlan(spec, ref, entrypoint, s.opts)
	if err != nil {
		return nil, fmt.Errorf("docker start: %w", err)
	}
	p.config.Labels[LabelHome] = s.opts.Home
	st, err := loadState(spec.StateDir)
	if err != nil {
		return nil, err
	}
	allowNet := len(spec.AllowNet)+len(spec.SetupAllowNet) > 0
	if !allowNet { // a warm container has no proxy of its own
		if h := s.pool.claim(ctx, spec, p, st); h != nil {
			return h, nil
		}
	}
	box := filepath.Join(spec.StateDir, "box")
	if err := makeBox(box, p.user); err != nil {
		return nil, err
	}
	if allowNet {
		p.inner.EgressBridge = BoxMount
	}
	if err := fillBox(box, spec.LogPath, p.user, p.inner, &p.host.Mounts); err != nil {
		return nil, err
	}
	if allowNet {
		if err := s.startEgress(spec, box); err != nil { // egress.go
			return nil, err
		}
	}
	p.host.Mounts = append(p.host.Mounts, mount.Mount{Type: mount.TypeBind, Source: box, Target: BoxMount})
	return s.create(ctx, cli, spec, p, st, box)
}

// create creates and starts the container; on failure it removes it again.
func (s *Sandbox) create(ctx context.Context, cli *client.Client, spec sandbox.Spec, p *plan, st *state, box string) (*handle, error) {
	created, err := cli.ContainerCreate(ctx, p.config, p.host, nil, nil, containerName(spec.RunID))
	if err != nil {
		if cerrdefs.IsConflict(err) {
			return nil, fmt.Errorf("docker start: a container for run %s already exists: %w", spec.RunID, err)
		}
		return nil, fmt.Errorf("docker create: %w", err)
	}
	id := created.ID
	fail := func(err error) (*handle, error) {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		cli.ContainerRemove(rctx, id, container.RemoveOptions{Force: true})
		return nil, err
	}
	if p.shell {
		if _, err := cli.ContainerStatPath(ctx, id, "/bin/sh"); err != nil {
			return fail(fmt.Errorf("docker start: image %s has no /bin/sh, which setup commands and shell mode need: %w", p.config.Image, err))
		}
	}
	if err := st.update(func(r *runState) { *r = runState{ContainerID: id, Box: box} }); err != nil {
		return fail(err)
	}
	if err := cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return fail(fmt.Errorf("docker start: %w", err))
	}
	h := s.newHandle(cli, id, spec, st, box, p.host.AutoRemove)
	go h.run()
	go h.watchRecord()
	return h, nil
}
