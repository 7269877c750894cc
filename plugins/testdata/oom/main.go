//go:build wasip1

// Command oom is a test plugin that allocates without bound when planning.
package main

import "github.com/runbox/runbox/sdk"

var hoard [][]byte

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "oom", Version: "0.1.0"},
		Plan: func(in sdk.PlanInput) (sdk.PlanOutput, error) {
			for {
				b := make([]byte, 8<<20)
				b[0] = 1
				hoard = append(hoard, b)
			}
		},
	})
}

func main() {}
