//go:build wasip1

// Command wasm is the runbox-progress plugin built as a wasip1 reactor.
package main

import (
	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: progress.Manifest,
		Parse: func(in sdk.ParseInput) (sdk.ParseOutput, error) {
			return progress.Parse(in), nil
		},
	})
}

func main() {}
