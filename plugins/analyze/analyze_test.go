package analyze

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/internal/plugintest"
	"github.com/runbox/runbox/sdk"
)

const (
	classifyData = "../builtin/classify/testdata"
	progressData = "../builtin/progress/testdata"
)

func TestMain(m *testing.M) { plugintest.Main(m) }

// openHost opens the built-ins as runboxd does, logging at debug level
// into the returned buffer ("plugin loaded ... source=builtin:NAME", or
// "plugin not loaded plugin=builtin:NAME").
func openHost(t *testing.T) (*plugins.Host, *plugintest.LogBuffer) {
	t.Helper()
	var bs []plugins.Builtin
	for _, m := range builtin.Modules() {
		bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
	}
	logs := &plugintest.LogBuffer{}
	h, err := plugins.NewHost(context.Background(), plugins.Config{
		Builtins: bs, CacheDir: plugintest.CacheDir(t), CallTimeout: 10 * time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close(context.Background()) })
	return h, logs
}

// logFixture is a classifier fixture testdata/NAME.log: "# key: value"
// header lines, "---", then the log.
type logFixture struct {
	name    string
	end     sdk.ClassifyInput
	code    string
	details map[string]string
	body    string
}

// classifyFixtures returns the classifier's log fixtures whose header says
// no more than analyze's flags can (exit code, signal): the others need a
// command, a sandbox or a stream that a log file does not carry.
func classifyFixtures(t *testing.T) []logFixture {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(classifyData, "*.log"))
	var out []logFixture
next:
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		f := logFixture{name: strings.TrimSuffix(filepath.Base(p), ".log"), details: map[string]string{}}
		for rest := string(b); ; {
			line, after, ok := strings.Cut(rest, "\n")
			if !ok {
				t.Fatalf("%s: no --- line", p)
			}
			if line = strings.TrimSuffix(line, "\r"); line == "---" {
				f.body = after
				break
			}
			rest = after
			k, v, _ := strings.Cut(strings.TrimPrefix(line, "# "), ":")
			v = strings.TrimSpace(v)
			switch {
			case k == "code":
				f.code = v
			case strings.HasPrefix(k, "detail."):
				f.details[strings.TrimPrefix(k, "detail.")] = v
			case k == "exit_code":
				if f.end.ExitCode, err = strconv.Atoi(v); err != nil {
					t.Fatalf("%s: %v", p, err)
				}
			case k == "signal":
				f.end.Signal = v
			case k == "note" || k == "retryable":
			default:
				continue next
			}
		}
		out = append(out, f)
	}
	if len(out) < 100 {
		t.Fatalf("only %d classifier log fixtures", len(out))
	}
	return out
}

// A failed command's log gives the code (and details) the classifier's own
// fixture names, through the last 64 KiB of the log as analyze reads it.
func TestFailedLogGivesItsCode(t *testing.T) {
	h, _ := openHost(t)
	ctx := context.Background()
	for _, f := range classifyFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			res, err := Analyze(ctx, h, strings.NewReader(f.body), f.end, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Failure == nil {
				t.Fatalf("no failure, want %s", f.code)
			}
			if res.Failure.Code != f.code {
				t.Fatalf("code %s, want %s (%s)", res.Failure.Code, f.code, res.Failure.Message)
			}
			for k, want := range f.details {
				if got := res.Failure.Details[k]; got != want {
					t.Errorf("detail %s = %q, want %q", k, got, want)
				}
			}
		})
	}
}

// A log with progress in it gives the progress plugin's latest state, the
// same as its golden file (the plugin's own lines-to-state test), and a
// command that succeeded has no failure.
func TestProgressLogGivesLatestState(t *testing.T) {
	h, _ := openHost(t)
	ctx := context.Background()
	logs, _ := filepath.Glob(filepath.Join(progressData, "*.log"))
	if len(logs) < 10 {
		t.Fatalf("only %d progress fixtures", len(logs))
	}
	for _, p := range logs {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".log"), func(t *testing.T) {
			f, err := os.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := Analyze(ctx, h, f, sdk.ClassifyInput{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			golden, err := os.ReadFile(strings.TrimSuffix(p, ".log") + ".json")
			if err != nil {
				t.Fatal(err)
			}
			var want *sdk.Progress
			if err := json.Unmarshal(golden, &want); err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, res.Progress); d != "" {
				t.Errorf("progress (-golden +analyze):\n%s", d)
			}
			if res.Failure != nil {
				t.Errorf("succeeded command, failure %+v", res.Failure)
			}
		})
	}
}

// Analyze loads only what a log needs: the classifier only for a command
// that failed, the progress plugin only for a log with a line that could
// reach it, the planner never.
func TestLoadsOnlyWhatTheLogNeeds(t *testing.T) {
	progressLog, err := os.ReadFile(filepath.Join(progressData, "lightning.log"))
	if err != nil {
		t.Fatal(err)
	}
	const plain = "Traceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    import torchvision\nModuleNotFoundError: No module named 'torchvision'\n"
	for _, c := range []struct {
		name       string
		log        string
		end        sdk.ClassifyInput
		wantLoaded []string
		progress   bool
		failure    string
	}{
		{"succeeded, no progress", plain, sdk.ClassifyInput{}, nil, false, ""},
		{"succeeded, progress", string(progressLog), sdk.ClassifyInput{}, []string{"progress"}, true, ""},
		{"failed, no progress", plain, sdk.ClassifyInput{ExitCode: 1}, []string{"classify"}, false, sdk.CodeModuleNotFound},
		{"failed, progress", string(progressLog) + plain, sdk.ClassifyInput{ExitCode: 1}, []string{"classify", "progress"}, true, sdk.CodeModuleNotFound},
		{"killed, no output", "", sdk.ClassifyInput{ExitCode: 137, Signal: "SIGKILL"}, []string{"classify"}, false, sdk.CodeOOMKilled},
	} {
		t.Run(c.name, func(t *testing.T) {
			h, logs := openHost(t)
			res, err := Analyze(context.Background(), h, strings.NewReader(c.log), c.end, nil)
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Progress != nil; got != c.progress {
				t.Errorf("progress %+v, want some: %v", res.Progress, c.progress)
			}
			if code := failureCode(res.Failure); code != c.failure {
				t.Errorf("failure %q, want %q", code, c.failure)
			}
			// Close waits for a load still going; a load, cut short or
			// not, is logged with the module's source.
			h.Close(context.Background())
			for _, name := range []string{"planner", "progress", "classify"} {
				loaded := strings.Contains(logs.String(), "=builtin:"+name+" ")
				want := strings.Contains(strings.Join(c.wantLoaded, ","), name)
				if loaded != want {
					t.Errorf("%s loaded: %v, want %v", name, loaded, want)
				}
			}
		})
	}
}

// The classifiers see the end of the log: a failure after megabytes of
// output is still found.
func TestClassifiesTheEndOfALongLog(t *testing.T) {
	h, _ := openHost(t)
	long := strings.Repeat("step ok, nothing to see here\n", 64<<10) +
		"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\nModuleNotFoundError: No module named 'yaml'\n"
	res, err := Analyze(context.Background(), h, strings.NewReader(long), sdk.ClassifyInput{ExitCode: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Failure == nil || res.Failure.Code != sdk.CodeModuleNotFound || res.Failure.Details["module"] != "yaml" {
		t.Fatalf("failure = %+v", res.Failure)
	}
}

// Without plugins, a failed command still gets the fallback's answer and
// no progress; a succeeded one, nothing.
func TestWithoutPlugins(t *testing.T) {
	fallback := func(in sdk.ClassifyInput) *sdk.Failure {
		if !strings.Contains(in.StderrTail, "boom") {
			t.Errorf("fallback did not get the log's tail: %q", in.StderrTail)
		}
		return &sdk.Failure{Code: sdk.CodeNonzeroExit, Plugin: "fallback"}
	}
	ctx := context.Background()
	res, err := Analyze(ctx, nil, strings.NewReader(" 45%|████▌     | 45/100\nboom\n"), sdk.ClassifyInput{ExitCode: 3}, fallback)
	if err != nil {
		t.Fatal(err)
	}
	if res.Progress != nil || res.Failure == nil || res.Failure.Plugin != "fallback" {
		t.Fatalf("without plugins: %+v", res)
	}
	res, err = Analyze(ctx, nil, strings.NewReader("boom\n"), sdk.ClassifyInput{}, fallback)
	if err != nil || res.Failure != nil || res.Progress != nil {
		t.Fatalf("succeeded without plugins: %+v, %v", res, err)
	}
}

// A reader that fails fails the analysis.
func TestReadError(t *testing.T) {
	_, err := Analyze(context.Background(), nil, errReader{}, sdk.ClassifyInput{ExitCode: 1}, nil)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") {
		t.Fatalf("err = %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, fmt.Errorf("disk on fire") }

func failureCode(f *sdk.Failure) string {
	if f == nil {
		return ""
	}
	return f.Code
}
