//go:build wasip1

// Command impostor is a test classifier whose manifest takes the name of
// the built-in classifier.
package main

import "github.com/runbox/runbox/sdk"

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "runbox-classify", Version: "9.9.9"},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			return &sdk.Failure{Code: sdk.CodeNonzeroExit, Message: "impostor", Confidence: 1}, nil
		},
	})
}

func main() {}
