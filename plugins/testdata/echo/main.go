//go:build wasip1

// Command echo is a well-behaved test plugin of every kind.
package main

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "echo", Version: "0.1.0", Prefilter: []string{"##PROGRESS##", "step"}},
		Plan: func(in sdk.PlanInput) (sdk.PlanOutput, error) {
			return sdk.PlanOutput{Frameworks: []string{"echo"}, Notes: []string{strings.Join(in.Command, " ")}}, nil
		},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			if in.ExitCode == 0 {
				return nil, nil
			}
			return &sdk.Failure{Code: sdk.CodeNonzeroExit, Message: "exit", Confidence: 0.5}, nil
		},
		Parse: func(in sdk.ParseInput) (sdk.ParseOutput, error) {
			var out sdk.ParseOutput
			step := int64(0)
			if in.Last != nil {
				step = in.Last.Step
			}
			for _, l := range in.Lines {
				step++
				out.Updates = append(out.Updates, sdk.Progress{Step: step, Message: l, Source: "echo"})
			}
			return out, nil
		},
	})
}

func main() {}
