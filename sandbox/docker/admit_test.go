package docker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sdk"
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

// TestAdmitGPUsAndAllowNet: a container asks for this host's GPUs by
// number (never more than the daemon knows, the refusal naming what
// exists; never with none known, naming RUNBOX_GPUS) or by device, which
// the queue does not count; its allow-list is kept by a container with no
// network, and refused beside one. While planning it takes the planner's
// GPUs, and says the proposed hosts are not its allow-list. No Docker
// daemon is needed (--pull skips the image check).
func TestAdmitGPUsAndAllowNet(t *testing.T) {
	two := gpu.Inventory{Devices: []gpu.Device{{Index: "0"}, {Index: "1"}}}
	for _, tc := range []struct {
		name    string
		inv     gpu.Inventory
		req     sandbox.Request
		reserve int
		refusal string // "" admitted
	}{
		{"one of two", two, sandbox.Request{GPUs: "1"}, 1, ""},
		{"all", two, sandbox.Request{GPUs: "all"}, -1, ""},
		{"devices by name", two, sandbox.Request{GPUs: "device=0,1"}, 0, ""},
		{"three of two", two, sandbox.Request{GPUs: "3"}, 0, "--gpus 3 asks for more GPUs than the daemon has: 2 known (0, 1)"},
		{"none known", gpu.Inventory{}, sandbox.Request{GPUs: "1"}, 0, "declare them with RUNBOX_GPUS=0,1"},
		{"not a number", two, sandbox.Request{GPUs: "x"}, 0, `--gpus "x": want a number of GPUs (1, 2, ...) or all`},
		{"allow-list", two, sandbox.Request{AllowNet: []string{"pypi.org"}}, 0, ""},
		{"allow-list with a network", two, sandbox.Request{AllowNet: []string{"pypi.org"}, Network: "bridge"}, 0,
			"--allow-net keeps the container to named hosts, --network bridge gives it the network: choose one"},
		{"setup list with a network", two, sandbox.Request{SetupAllowNet: []string{"pypi.org"}, Network: "host"}, 0, "--network host gives it the network"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := New(Options{Host: "unix:///tmp/runbox-none.sock", DefaultImage: "busybox", GPUs: tc.inv})
			req := tc.req
			req.Pull = true
			var spec sandbox.Spec
			v, err := sb.Admit(context.Background(), req, &spec)
			if tc.refusal != "" {
				if !errors.Is(err, sandbox.ErrRefused) || !strings.Contains(err.Error(), tc.refusal) {
					t.Fatalf("Admit: %v, want a refusal saying %q", err, tc.refusal)
				}
				if len(spec.AllowNet) > 0 {
					t.Errorf("spec got a list despite the refusal: %v", spec.AllowNet)
				}
				return
			}
			if err != nil || v.GPUs != tc.reserve {
				t.Fatalf("Admit: %+v %v, want %d GPUs reserved", v, err, tc.reserve)
			}
			if !slices.Equal(spec.AllowNet, req.AllowNet) {
				t.Errorf("spec allow-list %v, want %v", spec.AllowNet, req.AllowNet)
			}
		})
	}
	sb := New(Options{Host: "unix:///tmp/runbox-none.sock", DefaultImage: "busybox"})
	out := &sdk.PlanOutput{Recommendation: &sdk.Recommendation{GPUs: "all"}}
	var spec sandbox.Spec
	v, err := sb.Admit(context.Background(), sandbox.Request{Planning: true, Plan: &sandbox.PlanPromise{Output: out},
		ProposedAllowNet: []string{"pypi.org"}}, &spec)
	if err != nil || spec.GPUs != "all" || len(spec.AllowNet) != 0 || !strings.Contains(v.Note, "the command needs pypi.org (an allow-list applies to process runs") {
		t.Errorf("planning: %v, GPUs %q, allow %v, note %q", err, spec.GPUs, spec.AllowNet, v.Note)
	}
	if c := sb.Capabilities(context.Background()); c.GPUs != sandbox.GPUsHost || !c.AllowNet {
		t.Errorf("capabilities: GPUs %q AllowNet %v, want host GPUs and allow-lists", c.GPUs, c.AllowNet)
	}
}

// TestGiveGPUs: a starting container gets the GPUs the queue reserved for
// it as a device request.
func TestGiveGPUs(t *testing.T) {
	var spec sandbox.Spec
	New(Options{}).GiveGPUs(&spec, []string{"1", "3"})
	if spec.GPUs != "device=1,3" {
		t.Errorf("spec.GPUs %q, want device=1,3", spec.GPUs)
	}
}
