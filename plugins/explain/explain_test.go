package explain_test

import (
	"context"
	"testing"

	"github.com/runbox/runbox/plugins/explain"
	"github.com/runbox/runbox/sdk"
)

// countParser is a stand-in parser: each line "stepN" is progress step N.
// The real parsers are exercised end to end by cmd/runbox's
// TestLiveRunAndAnalyzeAgree; this checks the session's own sequence.
type countParser struct{ pending, step int64 }

func (p *countParser) Feed(_ context.Context, _, line string) {
	if len(line) > 4 && line[:4] == "step" {
		p.pending = int64(line[4] - '0')
	}
}
func (p *countParser) Flush(context.Context) { p.step = p.pending }
func (p *countParser) State() *sdk.Progress {
	if p.step == 0 {
		return nil
	}
	return &sdk.Progress{Step: p.step}
}

func TestSession(t *testing.T) {
	ctx := context.Background()
	var got sdk.ClassifyInput
	s := explain.New(&countParser{}, func(_ context.Context, in sdk.ClassifyInput) *sdk.Failure {
		got = in
		return &sdk.Failure{Code: sdk.CodeNonzeroExit}
	})
	if st, changed := s.Flush(ctx); st != nil || changed {
		t.Fatalf("no lines: %+v %v", st, changed)
	}
	s.Feed(ctx, "stdout", "step3")
	if p := s.Progress(); p != nil {
		t.Fatalf("progress before a flush: %+v", p)
	}
	if st, changed := s.Flush(ctx); st == nil || st.Step != 3 || !changed {
		t.Fatalf("after step3: %+v %v", st, changed)
	}
	if _, changed := s.Flush(ctx); changed {
		t.Fatal("a flush with nothing new says changed")
	}
	if p, f := s.Finish(ctx, nil); p == nil || p.Step != 3 || f != nil {
		t.Fatalf("succeeded: %+v %+v", p, f)
	}
	p, f := s.Finish(ctx, &sdk.ClassifyInput{ExitCode: 1})
	if f == nil || p == nil || got.Progress == nil || got.Progress.Step != 3 {
		t.Fatalf("failed: progress %+v failure %+v; the classifier saw %+v", p, f, got.Progress)
	}
	if !explain.Failed(sdk.ClassifyInput{Signal: "SIGKILL"}) || explain.Failed(sdk.ClassifyInput{}) {
		t.Error("Failed")
	}
}
