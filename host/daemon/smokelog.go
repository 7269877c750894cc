package daemon

import (
	"os"
	"path/filepath"
)

// SmokeOnlyNote heads a run's log when all it has is its smoke run's
// output: the smoke run failed, so the full run never started (and never
// wrote a log of its own). That output is what the failure's suggestion
// sends the user to read.
const SmokeOnlyNote = "[runbox: smoke run output — the smoke run failed, so the full run did not start]\n"

// smokeFallback is the log to show for a run whose own log is path: the
// smoke run's when the run has none and its smoke run left one (smoke
// reports whether it is that).
func smokeFallback(path string) (string, bool) {
	if _, err := os.Stat(path); err == nil {
		return path, false
	}
	sm := filepath.Join(filepath.Dir(path), "smoke", "output.log")
	if _, err := os.Stat(sm); err == nil {
		return sm, true
	}
	return path, false
}
