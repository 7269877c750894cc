//go:build wasip1

// Command wasm builds the default planner as a runbox plugin:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o planner.wasm ./plugins/builtin/planner/wasm
package main

import (
	"github.com/runbox/runbox/plugins/builtin/planner"
	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: planner.Manifest,
		Plan: func(in sdk.PlanInput) (sdk.PlanOutput, error) {
			return planner.Plan(in), nil
		},
	})
}

func main() {}
