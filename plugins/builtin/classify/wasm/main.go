//go:build wasip1

// Command wasm builds the classifier as a WebAssembly reactor module:
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared -o classify.wasm ./plugins/builtin/classify/wasm
package main

import (
	"github.com/runbox/runbox/plugins/builtin/classify"
	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: classify.Manifest,
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) { return classify.Classify(in), nil },
	})
}

func main() {}
