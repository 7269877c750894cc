package docker

import (
	"context"

	"github.com/runbox/runbox/sandbox"
)

// Capabilities: a container is isolated at every level by itself (its own
// root filesystem with the workspace mounted, no network unless asked
// for); it takes an image, cgroup limits, GPUs through a device request,
// and never inherits the client's environment.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	return sandbox.Capabilities{
		Isolation: []string{sandbox.IsolateNone, sandbox.IsolateNet, sandbox.IsolateFS, sandbox.IsolateFull},
		Networks:  []string{"none", "bridge", "host"},
		Limits:    map[string]string{"memory": "the container's cgroup", "cpus": "the container's cgroup", "pids": "the container's limit (4096 unless --pids)"},
		Images:    true,
		CleanEnv:  true,
		GPUs:      true,
	}
}

// Admit fills the container's options (the default image when none was
// named) and refuses a
// level of isolation that --network contradicts, or an image that is not
// present locally unless the request allows a pull: a pull can be
// gigabytes, or hang offline, and nobody asked for one.
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
	if req.Planning || req.Pull || spec.Image == "" || s.HasImage(ctx, spec.Image) {
		return sandbox.Verdict{}, nil
	}
	if !s.Health(ctx).Available {
		return sandbox.Verdict{}, nil // a daemon that does not answer is Start's to report
	}
	return sandbox.Verdict{}, sandbox.Refuse("image %s is not present locally: pull it (docker pull %s), build it, or pass --pull to let runbox pull it", spec.Image, spec.Image)
}
