package supervisor

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// A container's init.
//
// Package docker makes the static runbox binary the init of each run's
// container (mounted read-only; see sandbox/docker): `runbox __supervise
// BOX` serves the run whose Boot is in BOX, exactly as a process run is
// served (framed log, setup, stdin, timeout, stop, tree kill, exit
// record), BOX being a directory bind-mounted from the host. As PID 1
// the supervisor reaps every orphan in the container, and when it exits
// the kernel kills whatever is left in the container's pid namespace.
//
// A pooled container is started before its run exists: `runbox
// __supervise --await BOX [MAXWAIT]` warms up, then blocks on the FIFO BOX/ctl
// until the daemon writes a line there, and serves BOX then. It holds the
// FIFO open read-write while it waits, so a writer's non-blocking open
// succeeds exactly while it is waiting: a daemon that cannot open it
// (ENXIO) knows this container will never serve the run.

// AwaitArg makes a supervisor wait on BOX/CtlFile before serving BOX.
const AwaitArg = "--await"

// CtlFile is the FIFO a pooled container's supervisor waits on.
const CtlFile = "ctl"

// maxAwait ends a pooled supervisor that was never given a run (its
// daemon died), so a forgotten container does not idle forever; the
// daemon passes a shorter MAXWAIT, a few times its pool's idle lifetime.
const maxAwait = 6 * time.Hour

// awaitBox is `__supervise --await BOX [MAXWAIT]`.
func awaitBox(sigs chan os.Signal, args []string) int {
	box, wait := args[0], maxAwait
	if len(args) == 2 {
		if d, err := time.ParseDuration(args[1]); err == nil && d > 0 {
			wait = d
		}
	}
	se := &session{sigs: sigs, self: os.Getpid(), selfStart: warmUp()}
	ctl, err := os.OpenFile(filepath.Join(box, CtlFile), os.O_RDWR, 0)
	if err != nil {
		fmt.Fprintf(os.Stderr, "runbox supervisor: %v\n", err)
		return 1
	}
	_ = ctl.SetReadDeadline(time.Now().Add(wait))
	line, err := bufio.NewReader(ctl).ReadString('\n')
	ctl.Close() // from here on a daemon's open fails: this one is taken
	if err != nil || strings.TrimSpace(line) != "go" {
		return 0 // released unused (or never claimed)
	}
	// A SIGTERM already queued is a Stop of this very run (sent right
	// after the hand-over): serve cancels the run with it.
	code, _ := se.serve(box)
	return code
}

// WriteBoot hands a run to a supervisor (container init): spec goes to
// dir's spec file, which the supervisor removes once read. mode is the
// file's permission; anything wider than 0600 is for a container that
// runs as another uid than its writer, inside a home only its owner can
// enter.
func WriteBoot(dir string, spec sandbox.Spec, mode os.FileMode) error {
	p := filepath.Join(dir, protocol.SpecFile)
	if err := protocol.WriteJSON(p, protocol.Boot{Spec: spec}, false); err != nil {
		return fmt.Errorf("write supervisor spec: %w", err)
	}
	if mode != protocol.SecretMode {
		if err := os.Chmod(p, mode); err != nil {
			return fmt.Errorf("write supervisor spec: %w", err)
		}
	}
	return nil
}

// ReadExit returns the exit record a supervisor left in dir
// (os.ErrNotExist while there is none).
func ReadExit(dir string) (sandbox.Exit, error) { return protocol.ReadExit(dir) }

// RequestStop records the grace of a stop in dir; the supervisor reads it
// when the SIGTERM that follows arrives.
func RequestStop(dir string, grace time.Duration) error {
	return protocol.WriteJSON(filepath.Join(dir, protocol.StopFile), protocol.StopRequest{Grace: grace}, false)
}

// Release hands a waiting (--await) supervisor its run. It fails with
// ErrNotWaiting when no supervisor holds the FIFO: the container is dead
// or not ready yet.
func Release(box string) error {
	f, err := os.OpenFile(filepath.Join(box, CtlFile), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return ErrNotWaiting
	}
	if err != nil {
		return fmt.Errorf("release container init: %w", err)
	}
	defer f.Close()
	if _, err := f.Write([]byte("go\n")); err != nil {
		return fmt.Errorf("release container init: %w", err)
	}
	return nil
}

// Waiting reports whether a supervisor waits on box's FIFO.
func Waiting(box string) bool {
	f, err := os.OpenFile(filepath.Join(box, CtlFile), os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return false
	}
	f.Close()
	return true
}

// ErrNotWaiting means no supervisor waits on a box's FIFO.
var ErrNotWaiting = errors.New("no supervisor waits in the container")

// MakeCtl creates box's FIFO.
func MakeCtl(box string, mode uint32) error {
	if err := syscall.Mkfifo(filepath.Join(box, CtlFile), mode); err != nil {
		return fmt.Errorf("make control fifo: %w", err)
	}
	return nil
}
