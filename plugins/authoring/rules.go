package authoring

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/rules"
	"github.com/runbox/runbox/sdk"
)

// ScaffoldRules creates a rules project NAME in dir (which must not exist
// or be empty): NAME.rules.json with one progress format and one failure
// signature, fixtures that pass, runbox-bundle.json and a README — no
// toolchain needed (runbox plugins new --rules). Pack it with `runbox
// plugins pack`, like a WebAssembly plugin.
func ScaffoldRules(dir, name string) error {
	if err := bundle.CheckName(name); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("scaffold: %s is not empty", dir)
	}
	files := map[string]string{
		name + bundle.RulesSuffix: `{
  "name": "` + name + `",
  "progress": [
    {
      "name": "` + name + `-rounds",
      "literal": "ROUND ",
      "pattern": "ROUND (?P<step>\\d+)/(?P<total>\\d+) .*loss=(?P<loss>[-0-9.eE]+|nan|inf)",
      "finished": "ALL ROUNDS DONE"
    }
  ],
  "failures": [
    {
      "name": "` + name + `-quota",
      "code": "DISK_FULL",
      "phrases": ["scratch quota exceeded"],
      "message": "The scratch quota is used up",
      "suggestions": ["Remove old checkpoints from scratch, or ask for a larger quota."],
      "confidence": 0.9
    }
  ]
}
`,
		"runbox-bundle.json":                      `{"name": "` + name + `", "version": "0.1.0"}` + "\n",
		"testdata/progress-rounds.input.json":     `{"lines": ["starting", "ROUND 3/10 lr=0.1 loss=0.52", "ROUND 4/10 lr=0.1 loss=0.48"]}` + "\n",
		"testdata/progress-rounds.expected.json":  `{"step": 4, "total": 10, "percentage": 40, "phase": "train", "metrics": {"loss": 0.48}, "source": "` + name + `-rounds"}` + "\n",
		"testdata/classifier-quota.input.json":    `{"exit_code": 1, "stderr_tail": "writing checkpoint\nERROR: scratch quota exceeded for user lab7\n"}` + "\n",
		"testdata/classifier-quota.expected.json": `{"code": "DISK_FULL", "message": "The scratch quota is used up: ERROR: scratch quota exceeded for user lab7", "suggestions": ["Remove old checkpoints from scratch, or ask for a larger quota."], "retryable": false, "evidence": ["ERROR: scratch quota exceeded for user lab7"], "confidence": 0.9, "details": {"rule": "` + name + `-quota"}}` + "\n",
		"README.md": "# " + name + "\n\nRunbox rules: progress formats and failure signatures as data (docs/PLUGINS.md, \"Add a format in five lines\").\n\n" +
			"    runbox plugins test " + name + bundle.RulesSuffix + " testdata   # the fixtures\n" +
			"    runbox plugins pack . " + name + ".tar.gz --key KEY          # sign and pack\n" +
			"    runbox plugins install " + name + ".tar.gz\n",
	}
	for rel, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	return nil
}

// RunRulesFixtures checks a rules file (its errors name the line) and runs
// it over fixturesDir's KIND-NAME.input.json fixtures as RunFixtures does
// for a module: classifier-* take an sdk.ClassifyInput and expect the
// failure (null: none), progress-* take an sdk.ParseInput and expect the
// progress its lines fold to (null: none).
func RunRulesFixtures(rulesPath, fixturesDir string) (Report, error) {
	raw, err := os.ReadFile(rulesPath)
	if err != nil {
		return Report{}, err
	}
	rf, err := rules.Parse(raw)
	if err != nil {
		return Report{}, fmt.Errorf("%s: %w", rulesPath, err)
	}
	rep := Report{Plugin: rf.Name + " (rules)"}
	inputs, err := filepath.Glob(filepath.Join(fixturesDir, "*.input.json"))
	if err != nil || len(inputs) == 0 {
		return rep, fmt.Errorf("no fixtures (*.input.json) in %s", fixturesDir)
	}
	sort.Strings(inputs)
	for _, in := range inputs {
		res := runRulesFixture(rf, in)
		if res.OK {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func runRulesFixture(rf *rules.File, inPath string) FixtureResult {
	name := strings.TrimSuffix(filepath.Base(inPath), ".input.json")
	res := FixtureResult{Name: name}
	fail := func(err error) FixtureResult { res.Err = err.Error(); return res }
	input, err := os.ReadFile(inPath)
	if err != nil {
		return fail(err)
	}
	wantRaw, err := os.ReadFile(strings.TrimSuffix(inPath, ".input.json") + ".expected.json")
	if err != nil {
		return fail(err)
	}
	var got any
	switch {
	case strings.HasPrefix(name, "classifier-"):
		res.Kind = sdk.KindClassifier
		var in sdk.ClassifyInput
		if err := json.Unmarshal(input, &in); err != nil {
			return fail(fmt.Errorf("decode input: %w", err))
		}
		got = rf.Classify(in)
	case strings.HasPrefix(name, "progress-"):
		res.Kind = sdk.KindProgress
		var in sdk.ParseInput
		if err := json.Unmarshal(input, &in); err != nil {
			return fail(fmt.Errorf("decode input: %w", err))
		}
		var st *sdk.Progress
		rr := rf.NewReader()
		for _, l := range in.Lines {
			if u, ok := rr.Line(l); ok {
				if st == nil {
					st = &sdk.Progress{}
				}
				st.Merge(u)
			}
		}
		got = st
	default:
		return fail(fmt.Errorf("name the fixture classifier-%s or progress-%s", name, name))
	}
	var want, have any
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		return fail(fmt.Errorf("decode expected: %w", err))
	}
	b, err := json.Marshal(got)
	if err != nil {
		return fail(err)
	}
	if err := json.Unmarshal(b, &have); err != nil {
		return fail(err)
	}
	res.Diff = cmp.Diff(want, have)
	res.OK = res.Diff == ""
	return res
}
