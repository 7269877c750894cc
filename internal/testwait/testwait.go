// Package testwait lets a test's precondition wait for a shared service
// (Docker, Slurm, a browser) instead of sampling it once: `go test ./...`
// runs packages side by side, and a service another package is using can be
// busy, or still starting, at the moment a test looks.
package testwait

import (
	"fmt"
	"os"
	"time"
)

// For calls probe until it returns nil or d has passed, backing off from
// 100ms to 2s between tries. The error names what was waited for, how
// long, how many tries, and the last probe's error.
func For(what string, d time.Duration, probe func() error) error {
	start := time.Now()
	pause := 100 * time.Millisecond
	for tries := 1; ; tries++ {
		err := probe()
		if err == nil {
			return nil
		}
		if time.Since(start)+pause > d {
			return fmt.Errorf("waited %s for %s (%d tries): %w", time.Since(start).Round(time.Millisecond), what, tries, err)
		}
		time.Sleep(pause)
		pause = min(2*pause, 2*time.Second)
	}
}

// Required reports whether the environment variable env is "1": CI sets
// RUNBOX_REQUIRE_DOCKER=1 and the like so a missing service fails a test
// instead of skipping it.
func Required(env string) bool { return os.Getenv(env) == "1" }

// Budget is how long a precondition waits: long when the service is
// required (it is expected, and only slow), short when a missing service
// just means the test is skipped on this machine.
func Budget(env string) time.Duration {
	if Required(env) {
		return 60 * time.Second
	}
	return 2 * time.Second
}
