// Package builtin embeds the default plugins: WebAssembly modules built
// from ./progress/wasm, ./classify/wasm and ./planner/wasm by
// Makefile.inc (make builtin-plugins). TestEmbeddedMatchSources checks that
// the committed .wasm files are what their sources build to.
package builtin

import (
	_ "embed"

	"github.com/runbox/runbox/sdk"
)

//go:generate make -C ../.. -f plugins/builtin/Makefile.inc builtin-plugins

var (
	//go:embed progress.wasm
	progressWasm []byte
	//go:embed classify.wasm
	classifyWasm []byte
	//go:embed planner.wasm
	plannerWasm []byte
)

// Module is one embedded plugin.
type Module struct {
	Name string   // "progress", "classify", "planner": also the source dir
	Kind sdk.Kind // the kind it implements, known without compiling it
	Wasm []byte   // the module; callers must not modify it
}

// Modules lists the embedded plugins in the order a run needs them.
func Modules() []Module {
	return []Module{
		{Name: "planner", Kind: sdk.KindPlanner, Wasm: plannerWasm},
		{Name: "progress", Kind: sdk.KindProgress, Wasm: progressWasm},
		{Name: "classify", Kind: sdk.KindClassifier, Wasm: classifyWasm},
	}
}

// BuildFlags are the flags that make the build reproducible (byte for byte
// across machines with the same Go toolchain): run from the module root as
// GOOS=wasip1 GOARCH=wasm CGO_ENABLED=0 go build <BuildFlags> -o X ./plugins/builtin/NAME/wasm.
var BuildFlags = []string{"-buildmode=c-shared", "-trimpath", "-buildvcs=false", "-ldflags=-s -w -buildid="}
