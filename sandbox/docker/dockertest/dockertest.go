// Package dockertest helps tests that need a real Docker daemon: it skips
// them with a reason when none answers (or fails them when
// RUNBOX_REQUIRE_DOCKER=1) and builds a tiny local busybox image, so no
// registry is ever needed.
package dockertest

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/internal/testwait"
)

// BusyboxPath is where Debian's busybox-static puts its binary.
const BusyboxPath = "/bin/busybox"

// Require returns a client for the Docker daemon (DOCKER_HOST or the
// default socket), skipping the test when none answers, or failing it
// when RUNBOX_REQUIRE_DOCKER=1.
func Require(t testing.TB) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err == nil && !testwait.Required(requireEnv) && noDaemon.Load() != nil {
		err = noDaemon.Load().(error) // waited for once already in this process
	} else if err == nil {
		// A daemon that is busy with another package's containers, or
		// still starting, gets a bounded wait, not one sample.
		err = testwait.For("a Docker daemon at "+cli.DaemonHost(), testwait.Budget(requireEnv), func() error {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			_, err := cli.Ping(ctx)
			return err
		})
	}
	if err != nil {
		noDaemon.Store(err)
		if testwait.Required(requireEnv) {
			t.Fatalf("docker required (%s=1): %v", requireEnv, err)
		}
		t.Skipf("skipping: needs docker: %v", err)
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

const requireEnv = "RUNBOX_REQUIRE_DOCKER"

// noDaemon keeps the first failed wait, so a machine without Docker skips
// each later test at once.
var noDaemon atomic.Value

var (
	mu    sync.Mutex
	built = map[string]bool{}

	exeOnce sync.Once
	exePath string
	exeErr  error
)

// RunboxBinary returns a static runbox binary (CGO_ENABLED=0, as the
// Makefile builds it), which the Docker sandbox runs as each container's
// init. It is built once per process into a temporary directory that
// RemoveBuilt deletes; RUNBOX_TEST_INIT names a prebuilt one instead.
func RunboxBinary(t testing.TB) string {
	t.Helper()
	exeOnce.Do(func() {
		if p := os.Getenv("RUNBOX_TEST_INIT"); p != "" {
			exePath = p
			return
		}
		dir, err := os.MkdirTemp("", "runbox-dockertest-")
		if err != nil {
			exeErr = err
			return
		}
		exePath = filepath.Join(dir, "runbox")
		cmd := exec.Command("go", "build", "-o", exePath, "github.com/runbox/runbox/cmd/runbox")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			exeErr = fmt.Errorf("go build runbox: %v\n%s", err, out)
		}
	})
	if exeErr != nil {
		t.Fatalf("dockertest: %v", exeErr)
	}
	return exePath
}

// RemoveBuilt deletes what RunboxBinary built (call it from TestMain).
func RemoveBuilt() {
	if exePath != "" && os.Getenv("RUNBOX_TEST_INIT") == "" {
		os.RemoveAll(filepath.Dir(exePath))
	}
}

// BusyboxImage returns the tag of a local image holding only a static
// busybox with its applets installed in /bin (so /bin/sh exists). It is
// built once per process from /bin/busybox and tagged by the binary's
// hash, so an existing image is reused across processes.
func BusyboxImage(t testing.TB) string {
	t.Helper()
	cli := Require(t)
	bin, err := os.ReadFile(BusyboxPath)
	if err != nil {
		t.Fatalf("dockertest: %v: install a static busybox with 'apt-get install busybox-static'", err)
	}
	sum := sha256.Sum256(bin)
	tag := "runbox-test-busybox:" + hex.EncodeToString(sum[:6])
	mu.Lock()
	defer mu.Unlock()
	if built[tag] {
		return tag
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if _, err := cli.ImageInspect(ctx, tag); err == nil {
		built[tag] = true
		return tag
	}
	if err := buildImage(ctx, cli, tag, bin); err != nil {
		t.Fatalf("dockertest: build %s: %v", tag, err)
	}
	built[tag] = true
	return tag
}

const dockerfile = `FROM scratch
COPY busybox /bin/busybox
RUN ["/bin/busybox", "--install", "-s", "/bin"]
RUN ["/bin/busybox", "mkdir", "-m", "1777", "/tmp"]
`

func buildImage(ctx context.Context, cli *client.Client, tag string, bin []byte) error {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, f := range []struct {
		name string
		mode int64
		data []byte
	}{{"Dockerfile", 0o644, []byte(dockerfile)}, {"busybox", 0o755, bin}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: f.mode, Size: int64(len(f.data))}); err != nil {
			return err
		}
		if _, err := tw.Write(f.data); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	// The classic builder takes a tar context over the API; BuildKit is
	// not needed (nor, here, available).
	resp, err := cli.ImageBuild(ctx, &buf, build.ImageBuildOptions{
		Tags: []string{tag}, Remove: true, ForceRemove: true, Version: build.BuilderV1,
	})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	dec := json.NewDecoder(resp.Body)
	for {
		var msg struct {
			Error string `json:"error"`
		}
		if err := dec.Decode(&msg); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		if msg.Error != "" {
			return errors.New(msg.Error)
		}
	}
}
