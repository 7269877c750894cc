//go:build wasip1

// Command panic is a test plugin whose classify panics.
package main

import "github.com/runbox/runbox/sdk"

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "panicky", Version: "0.1.0"},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			panic("boom from guest")
		},
	})
}

func main() {}
