package host

import (
	"context"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/docker"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
	"github.com/runbox/runbox/sdk"
)

// TestAutoChoice: --sandbox auto and the planner's recommendation ask the
// preferred backend (Docker) whether it takes the run, and fall back to
// the process sandbox saying why: Docker not configured, not answering,
// or without the image; a container when it has it. With a real Docker
// daemon for the last two (skipped without one unless
// RUNBOX_REQUIRE_DOCKER=1).
func TestAutoChoice(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 2)
	ctx := context.Background()
	check := func(what, image, backend, reason string) {
		t.Helper()
		te.probes.auto = nil
		got, why, err := te.chooseSandbox(ctx, sandbox.Auto, image)
		if err != nil || got != backend || !strings.Contains(why, reason) {
			t.Errorf("%s: %s %q %v, want %s saying %q", what, got, why, err, backend, reason)
		}
	}
	plan := func(what string, rec sdk.Recommendation, backend, reason, image string) {
		t.Helper()
		te.probes.auto = nil
		req := api.RunRequest{}
		got, why, err := te.planSandbox(ctx, &req, &rec)
		if err != nil || got != backend || why != reason || req.Image != image {
			t.Errorf("%s: %s %q (image %q) %v, want %s %q (image %q)", what, got, why, req.Image, err, backend, reason, image)
		}
	}
	check("no Docker", "", sandbox.Process, "Docker is not configured on this host; using the process sandbox")
	plan("process recommended", sdk.Recommendation{Sandbox: sandbox.Process}, sandbox.Process, "recommended by the planner", "")
	plan("Docker recommended, none", sdk.Recommendation{Sandbox: sandbox.Docker, SandboxReason: "risky"}, sandbox.Process,
		"the planner recommends Docker (risky) but: Docker is not configured on this host; using the process sandbox", "")

	te.cfg.Sandboxes[sandbox.Docker] = docker.New(docker.Options{Host: "unix:///tmp/runbox-none.sock"})
	check("Docker down", "", sandbox.Process, "Docker is not available (")
	check("Docker down", "", sandbox.Process, "); using the process sandbox")

	dockertest.Require(t)
	img := dockertest.BusyboxImage(t)
	te.cfg.Sandboxes[sandbox.Docker] = docker.New(docker.Options{DefaultImage: img, Exe: dockertest.RunboxBinary(t)})
	absent := "runbox-test-absent:none"
	check("image absent", absent, sandbox.Process,
		"Docker is up but image "+absent+" is not present locally (pull or build it, or pass --image); using the process sandbox")
	check("image present", img, sandbox.Docker, "Docker is available on Linux; containers isolate the run (image "+img+")")
	te.cfg.DefaultImage = img
	check("default image present", "", sandbox.Docker, "(image "+img+")")
	plan("Docker recommended, default image present", sdk.Recommendation{Sandbox: sandbox.Docker}, sandbox.Docker,
		"Docker is available on Linux; containers isolate the run (image "+img+")", "")
	plan("Docker recommended, image present", sdk.Recommendation{Sandbox: sandbox.Docker, SandboxReason: "risky", Image: img},
		sandbox.Docker, "risky", img)
	plan("Docker recommended, image absent", sdk.Recommendation{Sandbox: sandbox.Docker, SandboxReason: "risky", Image: absent},
		sandbox.Process, "the planner recommends Docker (risky) but: Docker is up but image "+absent+" is not present locally (pull or build it, or pass --image); using the process sandbox", "")
}
