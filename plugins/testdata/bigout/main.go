//go:build wasip1

// Command bigout is a test plugin whose plan answer is 2 MiB.
package main

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "bigout", Version: "0.1.0"},
		Plan: func(in sdk.PlanInput) (sdk.PlanOutput, error) {
			return sdk.PlanOutput{Notes: []string{strings.Repeat("x", 2<<20)}}, nil
		},
	})
}

func main() {}
