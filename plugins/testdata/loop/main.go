//go:build wasip1

// Command loop is a test plugin whose classify never returns when asked
// with exit code 42, and answers normally otherwise.
package main

import "github.com/runbox/runbox/sdk"

var sink int

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "loop", Version: "0.1.0"},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			for in.ExitCode == 42 {
				sink++
			}
			return &sdk.Failure{Code: sdk.CodeNonzeroExit, Message: "fine", Confidence: 0.1}, nil
		},
	})
}

func main() {}
