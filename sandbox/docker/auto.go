package docker

import (
	"context"
	"fmt"
	"runtime"
)

// TakesAuto: --sandbox auto prefers a container on Linux, with Docker
// answering and the image present locally (a pull can be gigabytes, or
// hang offline, and nobody asked for one). Elsewhere Docker runs a VM,
// with slow bind mounts: not taken.
func (s *Sandbox) TakesAuto(ctx context.Context, image string) (bool, string) {
	if runtime.GOOS != "linux" {
		return false, "Docker is not configured on this host"
	}
	if h := s.Health(ctx); !h.Available {
		return false, "Docker is not available (" + h.Detail + ")"
	}
	if image == "" {
		image = s.opts.DefaultImage
	}
	if !s.HasImage(ctx, image) {
		return false, fmt.Sprintf("Docker is up but image %s is not present locally (pull or build it, or pass --image)", image)
	}
	return true, "Docker is available on Linux; containers isolate the run (image " + image + ")"
}
