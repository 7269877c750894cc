package docker

import "context"

// HasImage reports whether ref is present locally. The engine's auto
// sandbox choice uses it so that "auto" never starts a surprise pull.
func (s *Sandbox) HasImage(ctx context.Context, ref string) bool {
	if ref == "" {
		ref = s.opts.DefaultImage
	}
	cli, err := s.Client()
	if err != nil {
		return false
	}
	_, err = cli.ImageInspect(ctx, ref)
	return err == nil
}
