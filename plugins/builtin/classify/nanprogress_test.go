package classify

import (
	"math"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// A loss that progress saw go NaN or infinite is the failure when the
// output gave only the exit status; it never overrides a specific code or
// a fact runbox knows. (Moved from host/judge_test.go with the rule, issue
// #24: the cases are the same.)
func TestNaNLossFromProgress(t *testing.T) {
	nanLoss := &sdk.Progress{Step: 3060, Metrics: sdk.Metrics{"loss": math.NaN(), "lr": 1e-4}}
	oom := "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
	for _, c := range []struct {
		name string
		in   sdk.ClassifyInput
		want string
	}{
		{"exit status only, NaN loss", sdk.ClassifyInput{ExitCode: 1, Progress: nanLoss}, sdk.CodeNaNLoss},
		{"-Inf val_loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"val_loss": math.Inf(-1)}}}, sdk.CodeNaNLoss},
		{"a specific code stays", sdk.ClassifyInput{ExitCode: 1, Progress: nanLoss, StderrTail: oom}, sdk.CodeCUDAOOM},
		{"cancelled stays", sdk.ClassifyInput{Cancelled: true, Progress: nanLoss}, sdk.CodeCancelled},
		{"timed out stays", sdk.ClassifyInput{TimedOut: true, Progress: nanLoss}, sdk.CodeTimeout},
		{"oom kill stays", sdk.ClassifyInput{OOMKilled: true, ExitCode: 137, Progress: nanLoss}, sdk.CodeOOMKilled},
		{"finite loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"loss": 0.5}}}, sdk.CodeNonzeroExit},
		{"NaN that is not a loss", sdk.ClassifyInput{ExitCode: 1, Progress: &sdk.Progress{Metrics: sdk.Metrics{"grad_norm": math.NaN()}}}, sdk.CodeNonzeroExit},
		{"no progress", sdk.ClassifyInput{ExitCode: 1}, sdk.CodeNonzeroExit},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.in)
			if got.Code != c.want {
				t.Fatalf("code %q, want %q (%+v)", got.Code, c.want, got)
			}
			if got.Code == sdk.CodeNaNLoss && (len(got.Evidence) == 0 || !strings.Contains(got.Evidence[0], "=NaN") && !strings.Contains(got.Evidence[0], "=-Infinity")) {
				t.Errorf("evidence %q", got.Evidence)
			}
		})
	}
}
