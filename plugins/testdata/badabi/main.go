//go:build wasip1

// Command badabi is a test plugin that claims ABI 2 in its manifest.
package main

import "github.com/runbox/runbox/sdk"

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "badabi", Version: "0.1.0", ABI: 2},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) { return nil, nil },
	})
}

func main() {}
