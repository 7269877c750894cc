// Package supervisortest lets a test binary double as the process-run
// supervisor, as the runbox binary does, so tests that start process runs
// need no runbox binary: process.Options{Exe: os.Executable()} re-executes
// the test binary with supervisor.Arg, and Main, as the package's
// TestMain, runs the supervisor there. Only tests import it.
package supervisortest

import (
	"os"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// LingerEnv names a file a supervisor started by Main waits for, once its
// work is done, before it exits (at most a minute): a test can then see
// what holds while the supervisor process is still there.
const LingerEnv = "RUNBOX_TEST_LINGER_UNTIL"

// Main is a TestMain. In a test binary re-executed as the supervisor
// (os.Args[1] is supervisor.Arg) it runs supervisor.Main with the rest of
// the arguments and exits with its code; otherwise it runs the tests.
func Main(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == supervisor.Arg {
		code := supervisor.Main(os.Args[2:])
		lingerUntil(os.Getenv(LingerEnv))
		os.Exit(code)
	}
	if len(os.Args) > 1 && os.Args[1] == confine.Arg {
		os.Exit(confine.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func lingerUntil(path string) {
	if path == "" {
		return
	}
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if _, err := os.Stat(path); err == nil {
			return
		}
	}
}
