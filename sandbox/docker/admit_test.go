package docker

import (
	"context"
	"errors"
	"testing"

	"github.com/runbox/runbox/sandbox"
)

// TestAdmitOptions: the container's own options come from the request
// (the default image when none is named); a level that cuts the network
// is refused beside a --network that lets the container out. No Docker
// daemon is needed: the image check is skipped while planning and with
// --pull.
func TestAdmitOptions(t *testing.T) {
	sb := New(Options{Host: "unix:///tmp/runbox-none.sock", DefaultImage: "busybox"})
	for _, tc := range []struct {
		name    string
		req     sandbox.Request
		refused bool
		image   string
	}{
		{"default image", sandbox.Request{Pull: true, User: "1:1", ReadOnlyRoot: true}, false, "busybox"},
		{"named image", sandbox.Request{Pull: true, Image: "alpine"}, false, "alpine"},
		{"net with bridge", sandbox.Request{Pull: true, Isolate: "net", Network: "bridge"}, true, ""},
		{"full with host", sandbox.Request{Pull: true, Isolate: "full", Network: "host"}, true, ""},
		{"fs with bridge", sandbox.Request{Pull: true, Isolate: "fs", Network: "bridge"}, false, "busybox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var spec sandbox.Spec
			_, err := sb.Admit(context.Background(), tc.req, &spec)
			if got := errors.Is(err, sandbox.ErrRefused); got != tc.refused || (err != nil && !got) {
				t.Fatalf("Admit: %v, want refused=%v", err, tc.refused)
			}
			if tc.refused {
				return
			}
			if spec.Image != tc.image || spec.User != tc.req.User || spec.ReadOnlyRoot != tc.req.ReadOnlyRoot {
				t.Errorf("container options %+v, want image %q and the request's user and read-only root", spec.ContainerOptions, tc.image)
			}
		})
	}
}
