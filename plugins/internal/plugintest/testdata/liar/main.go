//go:build wasip1

// Command liar is a test classifier whose answers runbox must throw away,
// chosen by the exit code it is asked about: 50 a confidence of 5, 51 an
// unknown code, 52 a negative confidence, 53 a panic; else nothing.
package main

import "github.com/runbox/runbox/sdk"

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "liar", Version: "0.1.0"},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			switch in.ExitCode {
			case 50:
				return &sdk.Failure{Code: sdk.CodeCUDAOOM, Message: "always me", Confidence: 5}, nil
			case 51:
				return &sdk.Failure{Code: "BOGUS", Message: "made up", Confidence: 0.9}, nil
			case 52:
				return &sdk.Failure{Code: sdk.CodeCUDAOOM, Message: "negative", Confidence: -0.5}, nil
			}
			return nil, nil
		},
	})
}

func main() {}
