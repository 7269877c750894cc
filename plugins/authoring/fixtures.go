package authoring

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/google/go-cmp/cmp"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sdk"
)

// FixtureResult is the outcome of one fixture.
type FixtureResult struct {
	Name string   `json:"name"`
	Kind sdk.Kind `json:"kind"`
	OK   bool     `json:"ok"`
	Diff string   `json:"diff,omitempty"` // -expected +got
	Err  string   `json:"error,omitempty"`
}

// Report is what RunFixtures found.
type Report struct {
	Plugin  string          `json:"plugin"`
	Passed  int             `json:"passed"`
	Failed  int             `json:"failed"`
	Results []FixtureResult `json:"results"`
}

// String renders the report for a terminal.
func (r Report) String() string {
	var b strings.Builder
	for _, c := range r.Results {
		switch {
		case c.OK:
			fmt.Fprintf(&b, "ok   %s (%s)\n", c.Name, c.Kind)
		case c.Err != "":
			fmt.Fprintf(&b, "FAIL %s (%s): %s\n", c.Name, c.Kind, c.Err)
		default:
			fmt.Fprintf(&b, "FAIL %s (%s): result differs (-expected +got):\n%s\n", c.Name, c.Kind, c.Diff)
		}
	}
	fmt.Fprintf(&b, "%s: %d passed, %d failed\n", r.Plugin, r.Passed, r.Failed)
	return b.String()
}

// RunFixtures loads the plugin at wasmPath and runs every
// fixturesDir/NAME.input.json through it, comparing the result with
// NAME.expected.json as JSON values (null: the plugin has nothing to say).
// The input is the kind's input (sdk.ClassifyInput, sdk.ParseInput or
// sdk.PlanInput); when the plugin has several kinds, NAME starts with the
// kind and a dash ("classifier-oom"). The error is for a plugin that cannot
// load or a fixtures dir that cannot be read; failing fixtures are in Report.
func RunFixtures(ctx context.Context, wasmPath, fixturesDir string) (Report, error) {
	h, err := plugins.NewHost(ctx, plugins.Config{
		Files: []string{wasmPath}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return Report{}, err
	}
	defer h.Close(ctx)
	man, err := h.Describe(ctx, wasmPath)
	if err != nil {
		return Report{}, err
	}
	rep := Report{Plugin: man.Name + " " + man.Version}
	inputs, err := filepath.Glob(filepath.Join(fixturesDir, "*.input.json"))
	if err != nil || len(inputs) == 0 {
		return rep, fmt.Errorf("no fixtures (*.input.json) in %s", fixturesDir)
	}
	sort.Strings(inputs)
	for _, in := range inputs {
		res := runFixture(ctx, h, wasmPath, man, in)
		if res.OK {
			rep.Passed++
		} else {
			rep.Failed++
		}
		rep.Results = append(rep.Results, res)
	}
	return rep, nil
}

func runFixture(ctx context.Context, h *plugins.Host, source string, man sdk.Manifest, inPath string) FixtureResult {
	name := strings.TrimSuffix(filepath.Base(inPath), ".input.json")
	res := FixtureResult{Name: name, Kind: fixtureKind(man, name)}
	fail := func(err error) FixtureResult { res.Err = err.Error(); return res }
	if res.Kind == "" {
		return fail(fmt.Errorf("cannot tell the kind: name the fixture KIND-%s (plugin kinds %v)", name, man.Kinds))
	}
	input, err := os.ReadFile(inPath)
	if err != nil {
		return fail(err)
	}
	wantRaw, err := os.ReadFile(strings.TrimSuffix(inPath, ".input.json") + ".expected.json")
	if err != nil {
		return fail(err)
	}
	var want, got any
	if err := json.Unmarshal(wantRaw, &want); err != nil {
		return fail(fmt.Errorf("decode expected: %w", err))
	}
	raw, err := h.CallJSON(ctx, source, res.Kind, input)
	if err != nil {
		return fail(err)
	}
	if raw != nil {
		if err := json.Unmarshal(raw, &got); err != nil {
			return fail(fmt.Errorf("decode result: %w", err))
		}
	}
	res.Diff = cmp.Diff(want, got)
	res.OK = res.Diff == ""
	return res
}

func fixtureKind(man sdk.Manifest, name string) sdk.Kind {
	if len(man.Kinds) == 1 {
		return man.Kinds[0]
	}
	for _, k := range man.Kinds {
		if strings.HasPrefix(name, string(k)+"-") {
			return k
		}
	}
	return ""
}
