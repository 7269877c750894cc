// Command runbox runs scripts safely and observably: in a Docker container
// or a supervised host process, with progress, failure analysis and a
// history of every run.
//
// This binary is the thin client: every command talks to the daemon over
// its unix socket, and it doubles as each process run's supervisor. What
// needs the store, the sandboxes or the plugin runtime in process (the
// daemon itself, analyze, plugins) it hands to runboxd, installed beside
// it, by exec'ing it with the same arguments. Keeping Pebble, wazero and
// the Docker client out of this binary makes it start in a fifth of the
// time (docs/RATIONALE.md). The command line lives in cmd/internal/cli.
package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"syscall"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == supervisor.Arg {
		os.Exit(supervisor.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == egress.HelperArg { // a container's --allow-net proxy
		os.Exit(egress.HelperMain(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == confine.Arg {
		os.Exit(confine.Main(os.Args[2:]))
	}
	if len(os.Args) > 1 && cli.IsEngineCommand(os.Args[1]) {
		// runboxd parses the same command line: hand it over before
		// building the whole grammar here too. If runboxd is missing,
		// Main says so after parsing, as for `runbox --json analyze`.
		if bin, err := engineBinary(); err == nil {
			handOver(bin)
		}
	}
	// A command line waits on the daemon; a second P only spins up
	// threads and wakes them between its goroutines, on the CPUs the
	// daemon and the run need (issue 23: 0.2-0.3 ms of `runbox run --
	// true`). The supervisor, the egress helper and runboxd keep the
	// default.
	runtime.GOMAXPROCS(1)
	os.Exit(cli.Main(os.Args[1:], execEngine{}))
}

// execEngine hands an engine command to runboxd: it replaces this process
// with runboxd and the same arguments, so the pid, stdio, exit status and
// signals are the command's own.
type execEngine struct{}

func (execEngine) Run(_ context.Context, _ *cli.App, _ any) error {
	bin, err := engineBinary()
	if err != nil {
		return err
	}
	return handOver(bin)
}

// handOver replaces this process with bin and the same arguments; it
// returns only if the exec failed.
func handOver(bin string) error {
	argv := append([]string{bin}, os.Args[1:]...)
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		return fmt.Errorf("exec %s: %w", bin, err)
	}
	return nil // not reached
}

// engineBinary finds runboxd: beside this binary (symlinks resolved), else
// on PATH.
func engineBinary() (string, error) {
	sib, self, err := cli.Sibling("runboxd")
	if err == nil {
		return sib, nil
	}
	if p, err := exec.LookPath("runboxd"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("runboxd not found next to %s or on PATH: the daemon, analyze and plugins commands need it (make build puts both in bin/; go install github.com/runbox/runbox/cmd/...@latest installs both)", self)
}
