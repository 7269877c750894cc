//go:build wasip1

// Command initloop is a test plugin whose _initialize never returns (its
// init loops before it registers): loading it must be cut at the load
// deadline, without holding up the other plugins or a run's progress.
package main

import "github.com/runbox/runbox/sdk"

var sink int

func init() {
	for {
		sink++
	}
}

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "initloop", Version: "0.1.0", Prefilter: []string{"##PROGRESS##"}},
		Classify: func(sdk.ClassifyInput) (*sdk.Failure, error) { return nil, nil },
		Parse:    func(sdk.ParseInput) (sdk.ParseOutput, error) { return sdk.ParseOutput{}, nil },
	})
}

func main() {}
