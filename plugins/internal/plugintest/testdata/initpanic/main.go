//go:build wasip1

// Command initpanic is a test plugin that registers twice: the SDK
// panics in its _initialize ("sdk: Register called twice").
package main

import "github.com/runbox/runbox/sdk"

func init() {
	p := sdk.Plugin{
		Manifest: sdk.Manifest{Name: "initpanic", Version: "0.1.0"},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) { return nil, nil },
	}
	sdk.Register(p)
	sdk.Register(p)
}

func main() {}
