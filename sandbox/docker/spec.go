package docker

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// Paths inside the container. The box is a host directory bind-mounted
// read-write: the supervisor's spec, stop request and exit record, and the
// run log (see box.go). The runbox binary is mounted read-only and runs as
// the container's init.
const (
	BoxMount   = "/run/runbox"
	InitMount  = "/.runbox/runbox"
	StdinMount = "/run/runbox-stdin"
	logName    = "log"
)

// DefaultPids is the pids limit a container gets when the spec sets none:
// enough for any build or training job, and a fork bomb stops there
// instead of at the host's limits.
const DefaultPids = 4096

// plan is a Spec translated into Docker terms: the container to create
// and the spec its init (the supervisor) serves inside it.
type plan struct {
	config *container.Config
	host   *container.HostConfig
	inner  sandbox.Spec // the spec as the supervisor sees it, paths in the container
	shell  bool         // /bin/sh is needed
	user   string
}

// argv is the command the container runs, before any gate.
func argv(spec sandbox.Spec) ([]string, error) {
	if len(spec.Command) == 0 {
		return nil, errors.New("empty command")
	}
	if spec.Shell {
		return []string{"/bin/sh", "-c", strings.Join(spec.Command, " ")}, nil
	}
	return spec.Command, nil
}

// containerEnv is Spec.Env plus the host variables named in EnvAllow. The
// host environment is never inherited, whatever CleanEnv says: a container
// is a clean environment by construction.
func containerEnv(spec sandbox.Spec) []string {
	var env []string
	for _, name := range spec.EnvAllow {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return append(env, spec.Env...)
}

// runUser is Spec.User, or the invoking user's uid:gid.
func runUser(spec sandbox.Spec) (string, error) {
	if spec.User == "" {
		return fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()), nil
	}
	uid, gid, ok := strings.Cut(spec.User, ":")
	if _, err := strconv.ParseUint(uid, 10, 32); err != nil || !ok {
		return "", fmt.Errorf("user %q: want uid:gid", spec.User)
	}
	if _, err := strconv.ParseUint(gid, 10, 32); err != nil {
		return "", fmt.Errorf("user %q: want uid:gid", spec.User)
	}
	return spec.User, nil
}

func mounts(spec sandbox.Spec) ([]mount.Mount, error) {
	if spec.Workdir == "" {
		return nil, errors.New("no workdir")
	}
	wd, err := filepath.Abs(spec.Workdir)
	if err != nil {
		return nil, fmt.Errorf("workdir: %w", err)
	}
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		return nil, fmt.Errorf("workdir %s is not a directory", wd)
	}
	ms := []mount.Mount{{Type: mount.TypeBind, Source: wd, Target: WorkspaceMount}}
	for _, a := range spec.Assets {
		target, err := a.Target(WorkspaceMount)
		if err == nil && target == WorkspaceMount {
			err = fmt.Errorf("asset %q: a container's asset is mounted, and cannot be mounted over the whole workspace: name a path inside it", a.Dst)
		}
		if err != nil {
			return nil, err
		}
		dst := filepath.ToSlash(target)
		src, err := filepath.Abs(a.Src)
		if err != nil {
			return nil, fmt.Errorf("asset %s: %w", a.Src, err)
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("asset: %w", err)
		}
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: src, Target: dst, ReadOnly: true})
	}
	return ms, nil
}

func networkMode(spec sandbox.Spec) (container.NetworkMode, error) {
	switch spec.Network {
	case "", "none":
		return "none", nil
	case "bridge", "host":
		return container.NetworkMode(spec.Network), nil
	}
	return "", fmt.Errorf("network %q: want none, bridge or host", spec.Network)
}

// gpuRequest turns Spec.GPUs ("all", "N", "device=0,1") into a device
// request, as docker run --gpus does.
func gpuRequest(gpus string) (container.DeviceRequest, error) {
	req := container.DeviceRequest{Capabilities: [][]string{{"gpu"}}}
	switch {
	case gpus == "all":
		req.Count = -1
	case strings.HasPrefix(gpus, "device="):
		req.DeviceIDs = strings.Split(strings.Trim(strings.TrimPrefix(gpus, "device="), `"`), ",")
	default:
		n, err := strconv.Atoi(gpus)
		if err != nil || n <= 0 {
			return req, fmt.Errorf("gpus %q: want all, a count or device=ID[,ID]", gpus)
		}
		req.Count = n
	}
	return req, nil
}

// buildPlan translates spec. entrypoint is the image's: the supervisor
// runs it in front of the command, as Docker would have.
func buildPlan(spec sandbox.Spec, image string, entrypoint []string, o Options) (*plan, error) {
	cmd, err := argv(spec)
	if err != nil {
		return nil, err
	}
	user, err := runUser(spec)
	if err != nil {
		return nil, err
	}
	ms, err := mounts(spec)
	if err != nil {
		return nil, err
	}
	netMode, err := networkMode(spec)
	if err != nil {
		return nil, err
	}
	if spec.Stdin != nil && spec.StdinFile != "" {
		return nil, errors.New("both stdin and stdin_file given")
	}
	if spec.StdinFile != "" {
		src, err := filepath.Abs(spec.StdinFile)
		if err != nil {
			return nil, fmt.Errorf("stdin file: %w", err)
		}
		if _, err := os.Stat(src); err != nil {
			return nil, fmt.Errorf("stdin file: %w", err)
		}
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: src, Target: StdinMount, ReadOnly: true})
	}
	p := &plan{shell: spec.Shell || len(spec.Setup) > 0, user: user}
	// Env goes to the supervisor through the box, never into the
	// container's config, where docker inspect would show every secret.
	p.inner = sandbox.Spec{
		RunID:    spec.RunID,
		Command:  append(slices.Clone(entrypoint), cmd...),
		Workdir:  WorkspaceMount,
		Env:      containerEnv(spec),
		Stdin:    spec.Stdin,
		Setup:    spec.Setup,
		Timeout:  spec.Timeout,
		Grace:    spec.Grace,
		LogPath:  path.Join(BoxMount, logName),
		StateDir: BoxMount,
		// --allow-net: the init bridges to the proxy outside (egress.go).
		AllowNet: spec.AllowNet, SetupAllowNet: spec.SetupAllowNet,
		// Limits stay with Docker: the kernel enforces them on the whole
		// container, the supervisor included, and Docker reports the OOM.
	}
	if spec.StdinFile != "" {
		p.inner.StdinFile = StdinMount
	}
	cfg := &container.Config{
		Image:      image,
		Entrypoint: []string{InitMount},
		Cmd:        []string{supervisor.Arg, BoxMount},
		User:       user,
		WorkingDir: WorkspaceMount,
		Labels:     map[string]string{LabelRunID: spec.RunID, LabelManaged: "true"},
	}
	if o.Exe == "" {
		return nil, errors.New("no runbox binary to run as the container's init")
	}
	ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: o.Exe, Target: InitMount, ReadOnly: true})
	hc := &container.HostConfig{
		NetworkMode: netMode,
		Mounts:      ms,
		CapDrop:     []string{"ALL"},
		SecurityOpt: []string{"no-new-privileges"},
		// Output never passes through Docker: the supervisor writes the
		// run log itself (see docs/RATIONALE.md).
		LogConfig: container.LogConfig{Type: "none"},
	}
	// Docker removes the container as it exits, so a finished run leaves
	// none whatever happens to runbox meanwhile; but where only Docker can
	// tell an OOM kill (a memory limit), or the container is to be kept,
	// runbox reads its state first and removes it itself.
	hc.AutoRemove = spec.Limits.MemoryBytes == 0 && !spec.KeepContainer && !o.KeepContainers
	if spec.ReadOnlyRoot {
		hc.ReadonlyRootfs = true
		hc.Tmpfs = map[string]string{"/tmp": "rw,nosuid,nodev,exec,mode=1777"}
	}
	if l := spec.Limits; l.MemoryBytes > 0 {
		hc.Memory = l.MemoryBytes
		hc.MemorySwap = l.MemoryBytes
	}
	if spec.Limits.CPUs > 0 {
		hc.NanoCPUs = int64(spec.Limits.CPUs * 1e9)
	}
	pids := cmp.Or(spec.Limits.Pids, o.DefaultPids)
	if pids > 0 {
		hc.PidsLimit = &pids
	}
	if spec.GPUs != "" {
		req, err := gpuRequest(spec.GPUs)
		if err != nil {
			return nil, err
		}
		hc.DeviceRequests = []container.DeviceRequest{req}
	}
	p.config, p.host = cfg, hc
	return p, nil
}

// containerName is derived from the run id so one run cannot be started
// twice; Docker allows [a-zA-Z0-9][a-zA-Z0-9_.-]*.
func containerName(runID string) string {
	b := []byte("runbox-" + runID)
	for i, c := range b {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-'
		if !ok {
			b[i] = '_'
		}
	}
	return string(b)
}
