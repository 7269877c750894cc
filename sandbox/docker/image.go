package docker

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
)

// ensureImage returns the image's metadata, pulling it (within timeout)
// when it is not present. A failed pull fails fast with a hint.
func ensureImage(ctx context.Context, cli *client.Client, ref string, timeout time.Duration) (image.InspectResponse, error) {
	if ref == "" {
		return image.InspectResponse{}, fmt.Errorf("%w: %w: no image given and no default image configured", sandbox.ErrUnavailable, ErrImage)
	}
	img, err := cli.ImageInspect(ctx, ref)
	if err == nil {
		return img, nil
	}
	if !cerrdefs.IsNotFound(err) {
		return img, fmt.Errorf("inspect image %s: %w", ref, err)
	}
	perr := pull(ctx, cli, ref, timeout)
	if perr == nil {
		if img, err = cli.ImageInspect(ctx, ref); err == nil {
			return img, nil
		}
		perr = err
	}
	return img, fmt.Errorf("%w: %w: image %q is not present and pulling it failed: %v; "+
		"pull it with 'docker pull %s' or build it with 'docker build -t %s .'",
		sandbox.ErrUnavailable, ErrImage, ref, perr, ref, ref)
}

func pull(ctx context.Context, cli *client.Client, ref string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rc, err := cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return err
	}
	defer rc.Close()
	// The pull goes on only while its progress stream is read; an error
	// shows up in the stream, not as an HTTP status.
	dec := json.NewDecoder(rc)
	for {
		var msg struct {
			Error       string `json:"error"`
			ErrorDetail struct {
				Message string `json:"message"`
			} `json:"errorDetail"`
		}
		if err := dec.Decode(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			if ctx.Err() != nil {
				return fmt.Errorf("pull timed out after %s", timeout)
			}
			return err
		}
		if m := cmp.Or(msg.ErrorDetail.Message, msg.Error); m != "" {
			return errors.New(strings.TrimSpace(m))
		}
	}
}
