// Package docker runs a sandbox.Spec in a Docker container.
//
// The container's init is runbox's own supervisor (the static runbox
// binary, mounted read-only), so a container run is served exactly as a
// process run is: it writes the framed run log and the exit record into
// a box, a host directory bind-mounted into the container (box.go), runs
// setup commands, feeds stdin, enforces the timeout and stops the whole
// tree. Docker's log driver is off ("none"): output goes from the
// command's pipe to the run's file with no copy through the Docker
// daemon, and the container outlives a killed daemon with nothing to
// resume (see Recover). Short runs can take a warm container from a pool
// (pool.go).
package docker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"

	"github.com/runbox/runbox/internal/gpu"
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
	// LabelPoolBox marks a warm container of the pool with its box.
	LabelPoolBox = "io.runbox.pool-box"
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
	// Exe is the static runbox binary run as each container's init
	// (default: the "runbox" next to this executable).
	Exe string
	// DefaultPids is the pids limit of a container whose spec sets none
	// (0: DefaultPids; negative: no limit).
	DefaultPids int64
	// PoolSize is how many warm containers are kept per kind of run (same
	// image, limits, user, network and workspace); 0 turns the pool off.
	PoolSize int
	// PoolIdle is how long a kind of run keeps its warm containers after
	// its last run (default 2 minutes).
	PoolIdle time.Duration
	// PoolDir holds the boxes of warm containers; it must be on the
	// filesystem of the run logs (they are hard-linked into the boxes).
	// Without it there is no pool.
	PoolDir string
	// GPUs are this host's GPUs the daemon hands out (internal/gpu): what
	// --gpus N or all may ask for. The daemon's queue reserves them; a
	// started container gets its own through a device request.
	GPUs gpu.Inventory
}

// Sandbox is the Docker backend. It implements sandbox.Sandbox and
// sandbox.Sweeper.
type Sandbox struct {
	opts Options

	once sync.Once
	cli  *client.Client
	err  error

	initOnce sync.Once
	initErr  error

	live *idSet // containers this process serves: never swept
	pool *pool
}

var (
	_ sandbox.Sandbox       = (*Sandbox)(nil)
	_ sandbox.Sweeper       = (*Sandbox)(nil)
	_ sandbox.GPUGiver      = (*Sandbox)(nil)
	_ sandbox.AutoCandidate = (*Sandbox)(nil)
)

// New returns a Docker sandbox. It does not contact the daemon.
func New(opts Options) *Sandbox {
	if opts.PullTimeout <= 0 {
		opts.PullTimeout = 10 * time.Minute
	}
	if opts.DefaultPids == 0 {
		opts.DefaultPids = DefaultPids
	}
	if opts.PoolIdle <= 0 {
		opts.PoolIdle = 2 * time.Minute
	}
	s := &Sandbox{opts: opts, live: &idSet{m: map[string]bool{}}}
	s.pool = newPool(s)
	return s
}

// initReady checks once that the runbox binary can be a container's init.
func (s *Sandbox) initReady() error {
	s.initOnce.Do(func() {
		if s.opts.Exe == "" {
			exe, err := os.Executable()
			if err != nil {
				s.initErr = fmt.Errorf("find runbox binary: %w", err)
				return
			}
			s.opts.Exe = filepath.Join(filepath.Dir(exe), "runbox")
		}
		s.initErr = checkStatic(s.opts.Exe)
	})
	return s.initErr
}

// image is ensureImage with this sandbox's pull timeout.
func (s *Sandbox) image(ctx context.Context, cli *client.Client, ref string) (image.InspectResponse, error) {
	return ensureImage(ctx, cli, ref, s.opts.PullTimeout)
}

// idSet is a set of container ids safe for concurrent use.
type idSet struct {
	mu sync.Mutex
	m  map[string]bool
}

func (s *idSet) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.m[id] = true
}

func (s *idSet) remove(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.m, id)
}

func (s *idSet) has(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[id]
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

// Close removes the warm containers and releases the client's
// connections. Runs keep going.
func (s *Sandbox) Close() error {
	s.pool.close()
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
	return fmt.Errorf("%w: %s: %w", sandbox.ErrUnavailable, whyUnreachable(cli.DaemonHost(), err), err)
}

// whyUnreachable says in a few words why the daemon at host did not
// answer, and what to do: the three causes people meet are a socket this
// user may not use, no daemon, and anything else.
func whyUnreachable(host string, err error) string {
	switch {
	case strings.Contains(err.Error(), "permission denied"): // the client's own words; its cause is not wrapped
		return fmt.Sprintf("this user may not use the Docker socket at %s (permission denied): add it to the docker group (sudo usermod -aG docker $USER, then log in again)", host)
	case client.IsErrConnectionFailed(err):
		return fmt.Sprintf("no Docker daemon answers at %s (start dockerd; 'docker info' checks)", host)
	}
	return fmt.Sprintf("docker daemon not reachable at %s (is dockerd running? try 'docker info')", host)
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
		h.Detail = whyUnreachable(cli.DaemonHost(), err)
		return h
	}
	if err := s.initReady(); err != nil {
		// Docker answers, but no container could start: say so, so that
		// auto picks the process sandbox.
		h.Detail = err.Error()
		return h
	}
	h.Available = true
	h.Info["host"] = cli.DaemonHost()
	h.Info["init"] = s.opts.Exe
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
