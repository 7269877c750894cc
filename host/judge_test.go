package host

import (
	"math"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// A loss that progress saw go NaN or infinite is the failure when the
// classifiers had only the exit status; it never overrides a specific
// code or a fact runbox knows.
func TestNaNLossFromProgress(t *testing.T) {
	nanLoss := &sdk.Progress{Step: 3060, Metrics: sdk.Metrics{"loss": math.NaN(), "lr": 1e-4}}
	nonzero := &sdk.Failure{Code: sdk.CodeNonzeroExit}
	for _, c := range []struct {
		name string
		in   sdk.ClassifyInput
		f    *sdk.Failure
		want string // the code; "" for no failure
	}{
		{"no answer, NaN loss", sdk.ClassifyInput{ExitCode: 1, Progress: nanLoss}, nil, sdk.CodeNaNLoss},
		{"exit status only, NaN loss", sdk.ClassifyInput{ExitCode: 1, Progress: nanLoss}, nonzero, sdk.CodeNaNLoss},
		{"-Inf val_loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"val_loss": math.Inf(-1)}}}, nonzero, sdk.CodeNaNLoss},
		{"a specific code stays", sdk.ClassifyInput{ExitCode: 1, Progress: nanLoss}, &sdk.Failure{Code: sdk.CodeCUDAOOM}, sdk.CodeCUDAOOM},
		{"cancelled stays", sdk.ClassifyInput{Cancelled: true, Progress: nanLoss}, nil, ""},
		{"timed out stays", sdk.ClassifyInput{TimedOut: true, Progress: nanLoss}, nonzero, sdk.CodeNonzeroExit},
		{"finite loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"loss": 0.5}}}, nonzero, sdk.CodeNonzeroExit},
		{"NaN that is not a loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"grad_norm": math.NaN()}}}, nonzero, sdk.CodeNonzeroExit},
		{"no progress", sdk.ClassifyInput{ExitCode: 1}, nil, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := nanLossFromProgress(c.in, c.f)
			code := ""
			if got != nil {
				code = got.Code
			}
			if code != c.want {
				t.Fatalf("code %q, want %q (%+v)", code, c.want, got)
			}
			if code == sdk.CodeNaNLoss && (len(got.Evidence) == 0 || !strings.Contains(got.Evidence[0], "=NaN") && !strings.Contains(got.Evidence[0], "=-Infinity")) {
				t.Errorf("evidence %q", got.Evidence)
			}
		})
	}
}
