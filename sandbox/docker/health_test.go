package docker

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/container"

	"github.com/runbox/runbox/sandbox"
)

func TestHealth(t *testing.T) {
	e := setup(t)
	h := e.sb.Health(context.Background())
	if !h.Available || h.Version == "" || h.Info["api_version"] == "" || !slices.Contains(h.Runtimes, "runc") {
		t.Errorf("health %+v", h)
	}
	if slices.Contains(h.Runtimes, "nvidia") != (h.Info["gpu"] == "nvidia") {
		t.Errorf("gpu info %q with runtimes %v", h.Info["gpu"], h.Runtimes)
	}
}

func TestMissingImage(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "true")
	spec.Image = "runbox-no-such-image:1"
	_, err := e.sb.Start(context.Background(), spec)
	if !errors.Is(err, ErrImage) || !errors.Is(err, sandbox.ErrUnavailable) ||
		!strings.Contains(err.Error(), "docker pull runbox-no-such-image:1") ||
		!strings.Contains(err.Error(), "docker build -t runbox-no-such-image:1 .") {
		t.Fatalf("err = %v", err)
	}
}

func TestGPUsWithoutRuntime(t *testing.T) {
	e := setup(t)
	if slices.Contains(e.sb.Health(context.Background()).Runtimes, "nvidia") {
		t.Skip("this daemon has the nvidia runtime")
	}
	spec := e.newSpec(t, "true")
	spec.GPUs = "all"
	_, err := e.sb.Start(context.Background(), spec)
	if !errors.Is(err, ErrNoGPU) || !strings.Contains(err.Error(), "nvidia") {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkDockerTrue compares a runbox run of "true" (Start+Wait: image
// check, create, start, log copy, exit record, removal) with the plain
// equivalent of "docker run --rm IMAGE true" through the same client.
func BenchmarkDockerTrue(b *testing.B) {
	cli := dockertestRequire(b)
	img := dockertestImage(b)
	ctx := context.Background()
	b.Run("runbox", func(b *testing.B) {
		sb := New(Options{DefaultImage: img})
		defer sb.Close()
		dir := b.TempDir()
		for i := range b.N {
			spec := sandbox.Spec{RunID: benchID(i), Command: []string{"true"}, Workdir: dir,
				LogPath: dir + "/" + benchID(i) + ".log", StateDir: dir + "/" + benchID(i)}
			h, err := sb.Start(ctx, spec)
			if err != nil {
				b.Fatal(err)
			}
			if ex, err := h.Wait(ctx); err != nil || ex.Code != 0 {
				b.Fatal(ex, err)
			}
		}
	})
	b.Run("plain", func(b *testing.B) {
		for range b.N {
			c, err := cli.ContainerCreate(ctx, &container.Config{Image: img, Cmd: []string{"true"}}, nil, nil, nil, "")
			if err != nil {
				b.Fatal(err)
			}
			if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
				b.Fatal(err)
			}
			waitC, errC := cli.ContainerWait(ctx, c.ID, container.WaitConditionNotRunning)
			select {
			case <-waitC:
			case err := <-errC:
				b.Fatal(err)
			}
			if err := cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestDynamicInitBinary: a runbox built with cgo cannot be a container's
// init (no libc in most images); Health says so, so auto falls back, and
// Start fails as unavailable with the remedy, before creating anything.
func TestDynamicInitBinary(t *testing.T) {
	e := setup(t)
	o := testOptions(t)
	o.DefaultImage, o.Exe = e.image, "/bin/ls" // dynamically linked on Debian
	sb := New(o)
	defer sb.Close()
	if h := sb.Health(context.Background()); h.Available || !strings.Contains(h.Detail, "CGO_ENABLED=0") {
		t.Errorf("health %+v", h)
	}
	_, err := sb.Start(context.Background(), e.newSpec(t, "true"))
	if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), "dynamically linked") {
		t.Errorf("start: %v", err)
	}
}
