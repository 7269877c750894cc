package docker

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
	"github.com/runbox/runbox/sandbox/runlog"
)

// helperEnv makes the test binary a "daemon" that starts one run and then
// idles until killed (see TestRecoverAfterKill).
const helperEnv = "RUNBOX_DOCKER_TEST_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperMain(spec))
	}
	code := m.Run()
	dockertest.RemoveBuilt()
	os.Exit(code)
}

// testOptions are the options every test sandbox starts from.
func testOptions(tb testing.TB) Options {
	return Options{Exe: dockertest.RunboxBinary(tb), Home: testHome}
}

func helperMain(specJSON string) int {
	var spec sandbox.Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sb := New(Options{Exe: os.Getenv("RUNBOX_TEST_INIT"), Home: testHome})
	h, err := sb.Start(context.Background(), spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(h.Ref())
	select {} // copy output until SIGKILLed
}

const testHome = "runbox sandbox/docker tests"

type env struct {
	sb    *Sandbox
	cli   *client.Client
	image string
}

func setup(t *testing.T) env {
	t.Helper()
	cli := dockertest.Require(t)
	img := dockertest.BusyboxImage(t)
	// A home of their own: a runbox daemon started by another package's
	// tests on the same Docker daemon must not sweep these containers.
	o := testOptions(t)
	o.DefaultImage = img
	sb := New(o)
	t.Cleanup(func() { sb.Close() })
	return env{sb: sb, cli: cli, image: img}
}

// newSpec returns a spec with a fresh run id, a world-writable workspace
// and a log and state dir, and removes the run's container afterwards.
func (e env) newSpec(t *testing.T, cmd ...string) sandbox.Spec {
	t.Helper()
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(ws, 0o777)
	id := fmt.Sprintf("test-%s-%d", strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()), time.Now().UnixNano())
	t.Cleanup(func() { removeRun(e.cli, id) })
	return sandbox.Spec{
		RunID:    id,
		Command:  cmd,
		Workdir:  ws,
		LogPath:  filepath.Join(dir, "run.log"),
		StateDir: filepath.Join(dir, "state"),
		Grace:    time.Second,
	}
}

func removeRun(cli *client.Client, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, _ := cli.ContainerList(ctx, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", LabelRunID+"="+runID))})
	for _, c := range cs {
		cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true})
	}
}

// run starts spec and waits for it.
func (e env) run(t *testing.T, spec sandbox.Spec) (sandbox.Exit, map[runlog.Stream][]byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	h, err := e.sb.Start(ctx, spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	ex, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return ex, streams(t, spec.LogPath)
}

// streams reads a run log back, one byte slice per stream.
func streams(t *testing.T, path string) map[runlog.Stream][]byte {
	t.Helper()
	out := map[runlog.Stream][]byte{}
	var bufs = map[runlog.Stream]*bytes.Buffer{}
	err := runlog.ReadAll(path, func(r runlog.Record) error {
		if bufs[r.Stream] == nil {
			bufs[r.Stream] = &bytes.Buffer{}
		}
		bufs[r.Stream].Write(r.Data)
		return nil
	})
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	for s, b := range bufs {
		out[s] = b.Bytes()
	}
	return out
}

// containerGone reports whether the run's container has been removed.
func (e env) containers(t *testing.T, runID string) []container.Summary {
	t.Helper()
	cs, err := findRun(context.Background(), e.cli, runID)
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

func containerCommitOptions(ref string) container.CommitOptions {
	// The container's entrypoint is runbox's init, which the image must
	// not inherit; busybox as the entrypoint runs the commands as before.
	return container.CommitOptions{Reference: ref, Changes: []string{`ENTRYPOINT ["/bin/busybox"]`, `CMD ["true"]`}}
}

func removeImage(cli *client.Client, ref string) {
	cli.ImageRemove(context.Background(), ref, image.RemoveOptions{Force: true, PruneChildren: true})
}

func networkInspectOptions() network.InspectOptions { return network.InspectOptions{} }

func dockertestRequire(tb testing.TB) *client.Client { return dockertest.Require(tb) }
func dockertestImage(tb testing.TB) string           { return dockertest.BusyboxImage(tb) }

var benchRun = time.Now().UnixNano()

func benchID(i int) string { return fmt.Sprintf("bench-%d-%d", benchRun, i) }
