package rules

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

const good = `{
  "name": "lab",
  "progress": [
    {"name": "mytool", "literal": "MYTOOL",
     "pattern": "MYTOOL round (?P<step>\\d+)/(?P<total>\\d+) score=(?P<score>[-0-9.e]+)",
     "finished": "MYTOOL done"}
  ],
  "failures": [
    {"name": "quota", "code": "DISK_FULL", "phrases": ["Lab Quota Exhausted"],
     "message": "The lab's storage quota is used up", "suggestions": ["Clean /lab/scratch"]}
  ]
}`

func TestParseAndApply(t *testing.T) {
	f, err := Parse([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := f.Line("12:00 MYTOOL round 30/120 score=0.75 elapsed 3s")
	if !ok || u.Step != 30 || u.Total != 120 || u.Percentage != 25 || u.Metrics["score"] != 0.75 || u.Phase != "train" || u.Source != "mytool" {
		t.Fatalf("%+v %v", u, ok)
	}
	if _, ok := f.Line("an ordinary line"); ok {
		t.Fatal("an ordinary line gave progress")
	}
	if u, ok := f.Line("MYTOOL done in 3m"); !ok || u.Percentage != 100 {
		t.Fatalf("finished: %+v", u)
	}
	fail := f.Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: "x\nERROR: lab quota exhausted on /lab\n"})
	if fail == nil || fail.Code != sdk.CodeDiskFull || !strings.Contains(fail.Message, "quota") || fail.Details["rule"] != "quota" {
		t.Fatalf("%+v", fail)
	}
	if f.Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: "Traceback\nKeyError: 'x'\n"}) != nil {
		t.Fatal("a signature matched a line without its phrase")
	}
}

// A bad rules file is refused with an error that names its line, so that
// `plugins test` and install say where to look.
func TestParseErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct {
		src, want string
	}{
		{"{\n  \"name\": \"x\",\n  \"failures\": [\n    {\"name\": \"a\", \"code\": \"NOT_A_CODE\", \"phrases\": [\"abc\"], \"message\": \"m\"}\n  ]\n}", "line 4: failure \"a\": code \"NOT_A_CODE\""},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"AB\", \"pattern\": \"AB (?P<step>\\\\d+)\"}\n  ]\n}", "line 4: progress \"p\": literal must be 3 bytes"},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"pattern\": \"ABC (?P<step>\\\\d+\"}\n  ]\n}", "line 4: progress \"p\": pattern: error parsing regexp"},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"pattern\": \"XYZ (?P<step>\\\\d+)\"}\n  ]\n}", "pattern does not contain the literal"},
		{"{\n  \"name\": \"x\",\n  \"progres\": []\n}", "line 3: json: unknown field \"progres\""},
		{"{\n  \"name\": \"x\",\n  \"failures\": [\n    {\"name\": \"a\" \"code\": \"DISK_FULL\"}\n  ]\n}", "line 4:"},
	} {
		_, err := Parse([]byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.src, err, c.want)
		}
	}
}

// A rules file's format written as templates is read by the reader the
// built-in plugin's declarative formats use (package decl): holes by
// name, kinds with their conversions, and a {counter} that the run's
// Reader turns into a step once it rises.
func TestTemplatesAndCounter(t *testing.T) {
	f, err := Parse([]byte(`{
  "name": "lab",
  "progress": [
    {"name": "shards", "literal": "processed shard", "match": ["processed shard {counter}"]},
    {"name": "nb", "literal": "Epoch", "rate_unit": "it/s",
     "match": ["^[ {step} / {total}", "Epoch {epoch:elapsed}/{epoch_total}"],
     "optional": ["< {eta:clock}", "{rate} it/s", "loss {loss}"]}
  ]
}`))
	if err != nil {
		t.Fatal(err)
	}
	u, ok := f.Line("[ 450/1000 10:12 < 12:30, 0.73 it/s, Epoch 1.35/3] loss 0.5")
	if !ok || u.Step != 450 || u.Total != 1000 || u.Percentage != 45 || u.Epoch != 2 || u.EpochTotal != 3 ||
		u.ETASeconds != 750 || u.Rate != 0.73 || u.RateUnit != "it/s" || u.Metrics["loss"] != 0.5 || u.Source != "nb" || u.Phase != "train" {
		t.Fatalf("%+v %v", u, ok)
	}
	// stateless, a counter alone says nothing; a run's Reader says the
	// step once the counter rises, and starts again when it falls
	if _, ok := f.Line("processed shard 17"); ok {
		t.Fatal("File.Line read a lone counter")
	}
	r := f.NewReader()
	var steps []int64
	for _, n := range []string{"17", "18", "18", "20", "2", "3"} {
		if u, ok := r.Line("2024-05-17 10:00:0" + n[:1] + " processed shard " + n + " of the input"); ok {
			steps = append(steps, u.Step)
		}
	}
	if len(steps) != 3 || steps[0] != 18 || steps[1] != 20 || steps[2] != 3 {
		t.Fatalf("steps %v, want [18 20 3]", steps)
	}
}

func TestTemplateErrorsNameTheLine(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"match\": [\"ABC {step\"]}\n  ]\n}", "line 4: progress \"p\": template \"ABC {step\": an unclosed {"},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"match\": [\"XYZ {step}\"]}\n  ]\n}", "line 4: progress \"p\": no \"match\" template contains the literal"},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"match\": [\"ABC {step}\"], \"pattern\": \"ABC\"}\n  ]\n}", "not both"},
		{"{\n  \"name\": \"x\",\n  \"progress\": [\n    {\"name\": \"p\", \"literal\": \"ABC\", \"match\": [\"ABC {eta:hours}\"]}\n  ]\n}", "unknown kind \"hours\""},
	} {
		_, err := Parse([]byte(c.src))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want it to contain %q", c.src, err, c.want)
		}
	}
}
