package docker

import (
	"context"
	"fmt"
	"strings"

	"github.com/docker/docker/api/types/container"
)

// InspectImage returns a local image's id and its repository digest (empty
// for an image built here and never pushed or pulled): the record of what
// ran keeps both, so that "the same tag, another image" shows.
func (s *Sandbox) InspectImage(ctx context.Context, ref string) (id, digest string, err error) {
	if ref == "" {
		ref = s.opts.DefaultImage
	}
	cli, err := s.Client()
	if err != nil {
		return "", "", err
	}
	img, err := cli.ImageInspect(ctx, ref)
	if err != nil {
		return "", "", fmt.Errorf("inspect image %s: %w", ref, err)
	}
	for _, d := range img.RepoDigests {
		if _, dg, ok := strings.Cut(d, "@"); ok {
			digest = dg
			break
		}
	}
	return img.ID, digest, nil
}

// blkio sums a container's storage reads and writes (the stats API's
// io_service_bytes_recursive; "Read"/"Write" in cgroup v1, lower case in v2).
func blkio(b container.BlkioStats) (read, write uint64) {
	for _, e := range b.IoServiceBytesRecursive {
		switch strings.ToLower(e.Op) {
		case "read":
			read += e.Value
		case "write":
			write += e.Value
		}
	}
	return read, write
}
