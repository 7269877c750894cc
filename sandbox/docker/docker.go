// Package docker runs a sandbox.Spec in a Docker container.
//
// The container, not runbox, owns the run: its output goes to Docker's
// "local" log driver (exact bytes, partial-line metadata kept), and runbox
// copies it from there into the framed run log with Docker's own
// timestamps. Because live copying and recovery read the same source with
// the same cursor (see cursor.go), a daemon that is killed and restarted
// resumes the log without losing or repeating a byte.
//
// Setup commands run as docker exec in the same container while its main
// process waits at a gate on stdin (see setup.go).
package docker

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/runbox/runbox/sandbox"
)

// WorkspaceMount is where Spec.Workdir appears inside the container; it is
// also the container's working directory.
const WorkspaceMount = "/workspace"

// Labels put on every container runbox creates.
const (
	LabelRunID   = "io.runbox.run-id"
	LabelManaged = "io.runbox.managed"
	// LabelHome is the runbox home (state directory) whose daemon made the
	// container: two homes may share one Docker daemon, and each sweeps
	// only its own containers.
	LabelHome = "io.runbox.home"
)

// ErrImage means the image is neither present nor pullable. It is returned
// wrapped together with sandbox.ErrUnavailable.
var ErrImage = errors.New("docker image not available")

// ErrNoGPU means GPUs were requested but the daemon has no nvidia runtime.
var ErrNoGPU = errors.New("no GPU runtime in docker")

// Options configure a Sandbox. The zero value is usable.
type Options struct {
	// DefaultImage is used when Spec.Image is empty.
	DefaultImage string
	// Host overrides DOCKER_HOST (e.g. "unix:///tmp/none.sock").
	Host string
	// ClientOpts are applied after the defaults (FromEnv, API version
	// negotiation, Host); tests use them to point at another daemon.
	ClientOpts []client.Opt
	// KeepContainers keeps every finished container (as Spec.KeepContainer
	// does for one run), for debugging.
	KeepContainers bool
	// PullTimeout bounds pulling a missing image (default 10 minutes).
	PullTimeout time.Duration
	// Home is the runbox home this sandbox serves. Its containers are
	// labelled with it (LabelHome) and Sweep removes only those: another
	// home's daemon on the same Docker daemon keeps its runs.
	Home string
}

// Sandbox is the Docker backend. It implements sandbox.Sandbox and
// sandbox.Sweeper.
type Sandbox struct {
	opts Options

	once sync.Once
	cli  *client.Client
	err  error
}

var (
	_ sandbox.Sandbox = (*Sandbox)(nil)
	_ sandbox.Sweeper = (*Sandbox)(nil)
)

// New returns a Docker sandbox. It does not contact the daemon.
func New(opts Options) *Sandbox {
	if opts.PullTimeout <= 0 {
		opts.PullTimeout = 10 * time.Minute
	}
	return &Sandbox{opts: opts}
}

// Name is sandbox.Docker.
func (s *Sandbox) Name() string { return sandbox.Docker }

// Client returns the Docker client the sandbox uses (tests and tools).
func (s *Sandbox) Client() (*client.Client, error) {
	s.once.Do(func() {
		ops := []client.Opt{client.FromEnv, client.WithAPIVersionNegotiation()}
		if s.opts.Host != "" {
			ops = append(ops, client.WithHost(s.opts.Host))
		}
		ops = append(ops, s.opts.ClientOpts...)
		s.cli, s.err = client.NewClientWithOpts(ops...)
		if s.err != nil {
			s.err = fmt.Errorf("%w: docker client: %w", sandbox.ErrUnavailable, s.err)
		}
	})
	return s.cli, s.err
}

// Close releases the client's connections. Runs keep going.
func (s *Sandbox) Close() error {
	if cli, err := s.Client(); err == nil {
		return cli.Close()
	}
	return nil
}

// ready returns the client after checking that the daemon answers, so that
// a stopped daemon is reported once, clearly, as ErrUnavailable.
func (s *Sandbox) ready(ctx context.Context) (*client.Client, error) {
	cli, err := s.Client()
	if err != nil {
		return nil, err
	}
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := cli.Ping(pctx); err != nil {
		return nil, unreachable(cli, err)
	}
	return cli, nil
}

func unreachable(cli *client.Client, err error) error {
	return fmt.Errorf("%w: docker daemon not reachable at %s: %w (is dockerd running? try 'docker info')",
		sandbox.ErrUnavailable, cli.DaemonHost(), err)
}

// Health pings the daemon and reports its version and runtimes.
func (s *Sandbox) Health(ctx context.Context) sandbox.Health {
	h := sandbox.Health{Name: sandbox.Docker, Info: map[string]string{}}
	cli, err := s.Client()
	if err != nil {
		h.Detail = err.Error()
		return h
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	ping, err := cli.Ping(ctx)
	if err != nil {
		h.Detail = fmt.Sprintf("docker daemon not reachable at %s: %v", cli.DaemonHost(), err)
		return h
	}
	h.Available = true
	h.Info["host"] = cli.DaemonHost()
	h.Info["api_version"] = ping.APIVersion
	if v, err := cli.ServerVersion(ctx); err == nil {
		h.Version = v.Version
		h.Info["api_version"] = v.APIVersion
		h.Info["os"] = v.Os + "/" + v.Arch
	}
	info, err := cli.Info(ctx)
	if err != nil {
		h.Detail = fmt.Sprintf("docker info: %v", err)
		return h
	}
	for name := range info.Runtimes {
		h.Runtimes = append(h.Runtimes, name)
	}
	sort.Strings(h.Runtimes)
	h.Info["cgroup_version"] = info.CgroupVersion
	h.Info["storage_driver"] = info.Driver
	h.Info["default_runtime"] = info.DefaultRuntime
	if slices.Contains(h.Runtimes, "nvidia") {
		h.Info["gpu"] = "nvidia"
	} else {
		h.Detail = "no nvidia runtime: GPU runs unavailable"
	}
	return h
}

// hasRuntime reports whether the daemon has the named runtime.
func hasRuntime(ctx context.Context, cli *client.Client, name string) (bool, error) {
	info, err := cli.Info(ctx)
	if err != nil {
		return false, fmt.Errorf("docker info: %w", err)
	}
	_, ok := info.Runtimes[name]
	return ok, nil
}
