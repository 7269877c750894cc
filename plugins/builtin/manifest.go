package builtin

import (
	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
)

// Manifest returns what the module describes when that is known without
// loading it, else nil. Only the progress plugin's is: its prefilter tells
// which output lines could reach it, so a log without progress in it never
// loads it (docs/RATIONALE.md, "analyze loads only what a log needs").
// plugins' TestBuiltinManifests checks it against the module.
func (m Module) Manifest() *sdk.Manifest {
	if m.Name == "progress" {
		return &progress.Manifest
	}
	return nil
}
