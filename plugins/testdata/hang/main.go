//go:build wasip1

// Command hang is a test plugin of every kind whose every call (plan,
// classify, parse) never returns: the host must cut it at its call
// deadline, switch it off, and serve the other plugins meanwhile. Its
// priority is above the built-ins', so it is asked first.
package main

import "github.com/runbox/runbox/sdk"

var sink int

func spin() {
	for {
		sink++
	}
}

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "hang", Version: "0.1.0", Priority: 10, Prefilter: []string{"##PROGRESS##", "step"}},
		Plan: func(sdk.PlanInput) (sdk.PlanOutput, error) {
			spin()
			return sdk.PlanOutput{}, nil
		},
		Classify: func(sdk.ClassifyInput) (*sdk.Failure, error) {
			spin()
			return nil, nil
		},
		Parse: func(sdk.ParseInput) (sdk.ParseOutput, error) {
			spin()
			return sdk.ParseOutput{}, nil
		},
	})
}

func main() {}
