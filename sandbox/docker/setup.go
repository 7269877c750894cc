package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Setup commands: one container, a gate on stdin.
//
// A run with setup commands starts its container with the gate below as
// the entrypoint (the image's own entrypoint and the command follow it as
// arguments) and with stdin open and attached by runbox. The gate blocks
// in "read" on stdin while runbox runs each setup command with docker exec
// in the same container, same user, workspace and environment, copying
// the exec's output to the setup streams of the run log. Then runbox
// writes "go\n" followed by the run's stdin and closes it; the gate execs
// the command, which inherits the rest of stdin (sh reads a pipe one byte
// at a time, so it consumes exactly the gate line). If a setup command
// fails, runbox writes "stop\n" instead and the gate exits 125, so the main
// command never starts and no kill is needed. If runbox dies during setup,
// Docker closes the container's stdin (StdinOnce), the gate reads EOF and
// the container ends by itself; Recover then reports the run as lost. The
// main command's output stays alone on the container's stdout/stderr, and
// its exit status, OOM flag and timing are the container's.
const gateScript = `IFS= read -r gate && [ "$gate" = go ] && exec "$@"; exit 125`

const (
	gateGo   = "go\n"
	gateStop = "stop\n"
)

// runSetup runs spec.Setup in order; it returns the exit code of the
// first one that fails, or 0.
func runSetup(ctx context.Context, cli *client.Client, id string, p *plan, spec sandbox.Spec, w *runlog.Writer) (int, error) {
	for _, cmd := range spec.Setup {
		w.Write(runlog.Meta, []byte("setup: "+cmd+"\n"))
		code, err := execSetup(ctx, cli, id, p, cmd, w)
		if err != nil {
			return 0, fmt.Errorf("setup %q: %w", cmd, err)
		}
		if code != 0 {
			w.Write(runlog.Meta, fmt.Appendf(nil, "setup failed with exit code %d: %s\n", code, cmd))
			return code, nil
		}
	}
	return 0, nil
}

func execSetup(ctx context.Context, cli *client.Client, id string, p *plan, cmd string, w *runlog.Writer) (int, error) {
	ex, err := cli.ContainerExecCreate(ctx, id, container.ExecOptions{
		User:         p.user,
		Env:          p.env,
		WorkingDir:   WorkspaceMount,
		Cmd:          []string{"/bin/sh", "-c", cmd},
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return 0, fmt.Errorf("exec create: %w", err)
	}
	hj, err := cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, fmt.Errorf("exec attach: %w", err)
	}
	defer hj.Close()
	_, err = stdcopy.StdCopy(w.StreamWriter(runlog.SetupStdout), w.StreamWriter(runlog.SetupStderr), hj.Reader)
	if err != nil {
		return 0, fmt.Errorf("exec output: %w", err)
	}
	// The stream ends a moment before the daemon records the exit code.
	for {
		st, err := cli.ContainerExecInspect(ctx, ex.ID)
		if err != nil {
			return 0, fmt.Errorf("exec inspect: %w", err)
		}
		if !st.Running {
			return st.ExitCode, nil
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// attachStdin attaches to the container's stdin before it starts.
func attachStdin(ctx context.Context, cli *client.Client, id string) (*types.HijackedResponse, error) {
	hj, err := cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true})
	if err != nil {
		return nil, fmt.Errorf("attach stdin: %w", err)
	}
	return &hj, nil
}

// feedStdin writes prefix, then the run's stdin, then closes the
// container's stdin. Errors are reported in the run log: the command then
// reads a short stdin, which it will notice.
func feedStdin(hj *types.HijackedResponse, prefix string, spec sandbox.Spec, w *runlog.Writer) {
	defer hj.CloseWrite()
	if _, err := io.WriteString(hj.Conn, prefix); err != nil || prefix == gateStop {
		return // the command never starts, so nobody reads its stdin
	}
	var err error
	switch {
	case spec.Stdin != nil:
		_, err = hj.Conn.Write(spec.Stdin)
	case spec.StdinFile != "":
		var f *os.File
		if f, err = os.Open(spec.StdinFile); err == nil {
			_, err = io.Copy(hj.Conn, f)
			f.Close()
		}
	}
	if err != nil {
		w.Write(runlog.Meta, fmt.Appendf(nil, "stdin: %v\n", err))
	}
}
