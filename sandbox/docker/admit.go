package docker

import (
	"context"
	"strings"

	"github.com/runbox/runbox/sandbox"
)

// Capabilities: a container is isolated at every level by itself (its own
// root filesystem with the workspace mounted, no network unless asked
// for); it takes an image, cgroup limits, this host's GPUs through a
// device request, an allow-list (no network, its init carrying
// connections to a proxy outside), and never inherits the client's
// environment.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	return sandbox.Capabilities{
		Isolation: []string{sandbox.IsolateNone, sandbox.IsolateNet, sandbox.IsolateFS, sandbox.IsolateFull},
		Networks:  []string{"none", "bridge", "host"},
		Limits:    map[string]string{"memory": "the container's cgroup", "cpus": "the container's cgroup", "pids": "the container's limit (4096 unless --pids)"},
		Images:    true,
		CleanEnv:  true,
		GPUs:      sandbox.GPUsHost,
		AllowNet:  true,
	}
}

// Admit fills the container's options (the default image when none was
// named) and refuses a level of isolation that --network contradicts, an
// image that is not present locally unless the request allows a pull (a
// pull can be gigabytes, or hang offline, and nobody asked for one), an
// allow-list beside a network, and more GPUs than the daemon knows. While
// planning it takes the GPUs the planner recommends.
func (s *Sandbox) Admit(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	spec.ContainerOptions = sandbox.ContainerOptions{Image: req.Image, ReadOnlyRoot: req.ReadOnlyRoot,
		KeepContainer: req.KeepContainer, User: req.User}
	if spec.Image == "" {
		spec.Image = s.opts.DefaultImage
	}
	if l := req.Isolate; l == sandbox.IsolateNet || l == sandbox.IsolateFull {
		if req.Network != "" && req.Network != "none" {
			return sandbox.Verdict{}, sandbox.Refuse("--isolate %s cuts the network, --network %s lets the container out: choose one (a container has no network unless --network says so)", l, req.Network)
		}
	}
	if err := s.admitImage(ctx, req, spec); err != nil {
		return sandbox.Verdict{}, err
	}
	if len(req.AllowNet) > 0 || len(req.SetupAllowNet) > 0 {
		// The container has no network; its init carries connections to
		// a proxy outside (egress.go).
		if req.Network != "" && req.Network != "none" {
			return sandbox.Verdict{}, sandbox.Refuse("--allow-net keeps the container to named hosts, --network %s gives it the network: choose one", req.Network)
		}
		spec.AllowNet, spec.SetupAllowNet = req.AllowNet, req.SetupAllowNet
	}
	if req.Planning {
		var v sandbox.Verdict
		if hosts := req.ProposedAllowNet; len(hosts) > 0 {
			v.Note = "network: the command needs " + strings.Join(hosts, ", ") + " (an allow-list applies to process runs; this container gets --network as recommended)"
		}
		if p := req.Plan; spec.GPUs == "" && p != nil && p.Output != nil && p.Output.Recommendation != nil {
			spec.GPUs = p.Output.Recommendation.GPUs
		}
		return v, nil
	}
	n, err := s.opts.GPUs.Reserve(req.GPUs)
	if err != nil {
		return sandbox.Verdict{}, sandbox.Refuse("%v", err)
	}
	return sandbox.Verdict{GPUs: n}, nil
}

// GiveGPUs hands a starting container the GPUs reserved for it, as a
// device request (the container then numbers them from 0 itself).
func (s *Sandbox) GiveGPUs(spec *sandbox.Spec, devs []string) {
	if s.opts.GPUs.Apple() {
		return
	}
	spec.GPUs = "device=" + strings.Join(devs, ",")
}

// admitImage refuses an image that is not present locally, unless the
// request allows a pull; planning refuses none.
func (s *Sandbox) admitImage(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) error {
	if req.Planning || req.Pull || spec.Image == "" || s.HasImage(ctx, spec.Image) {
		return nil
	}
	if !s.Health(ctx).Available {
		return nil // a daemon that does not answer is Start's to report
	}
	return sandbox.Refuse("image %s is not present locally: pull it (docker pull %s), build it, or pass --pull to let runbox pull it", spec.Image, spec.Image)
}
