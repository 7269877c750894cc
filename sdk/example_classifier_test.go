//go:build !wasip1

package sdk_test

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// A classifier explains a run that failed. The host calls every
// classifier with the run's exit, limits and the tails of its output,
// and keeps the answer with the highest confidence (ties: the higher
// priority); it fills in Plugin. Code must be one of sdk.Codes, or the
// answer is discarded. A nil Failure means "nothing to say".
func ExamplePlugin_classifier() {
	p := sdk.Plugin{
		Manifest: sdk.Manifest{Name: "myframework-oom", Version: "0.1.0", Priority: 10},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) {
			for _, line := range lines(in.StderrTail) {
				if strings.Contains(line, "MyFramework: out of device memory") {
					return &sdk.Failure{
						Code:        sdk.CodeCUDAOOM,
						Message:     "MyFramework ran out of GPU memory",
						Suggestions: []string{"halve the batch size"},
						Retryable:   true,
						Evidence:    []string{line},
						Confidence:  0.9,
					}, nil
				}
			}
			return nil, nil
		},
	}

	// What runbox_classify receives after a run ended unsuccessfully.
	for _, in := range []string{
		`{"exit_code":1,"limits":{"memory_bytes":8589934592},` +
			`"stderr_tail":"step 10\nMyFramework: out of device memory (wanted 2 GiB)\n"}`,
		`{"exit_code":2,"limits":{},"stderr_tail":"usage: train.py [-h]\n"}`,
	} {
		var ci sdk.ClassifyInput
		decode(in, &ci)
		f, err := p.Classify(ci)
		if err != nil {
			panic(err)
		}
		show(f) // the result in runbox_classify's envelope
	}
	// Output:
	// {"code":"CUDA_OOM","message":"MyFramework ran out of GPU memory","suggestions":["halve the batch size"],"retryable":true,"evidence":["MyFramework: out of device memory (wanted 2 GiB)"],"confidence":0.9}
	// null
}
