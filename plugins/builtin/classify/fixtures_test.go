package classify

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// A fixture is either testdata/NAME.log — a header of "# key: value" lines,
// a "---" line, then the log — or testdata/NAME.input.json (a ClassifyInput)
// with testdata/NAME.expect.json ({"code": ..., "details": {...}}).
//
// Header keys: code (expected), detail.KEY (expected detail), retryable
// (expected), exit_code, signal, stream (stdout|stderr, default stderr),
// command (space-separated), sandbox, oom_killed, timed_out, cancelled,
// stalled, smoke, sandbox_error, peak_rss, memory_limit.
type fixture struct {
	name    string
	in      sdk.ClassifyInput
	code    string
	details map[string]string
	retry   *bool
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	var out []fixture
	logs, _ := filepath.Glob("testdata/*.log")
	for _, p := range logs {
		out = append(out, parseLogFixture(t, p))
	}
	inputs, _ := filepath.Glob("testdata/*.input.json")
	for _, p := range inputs {
		f := fixture{name: strings.TrimSuffix(filepath.Base(p), ".input.json")}
		readJSON(t, p, &f.in)
		var exp struct {
			Code      string            `json:"code"`
			Details   map[string]string `json:"details"`
			Retryable *bool             `json:"retryable"`
		}
		readJSON(t, strings.TrimSuffix(p, ".input.json")+".expect.json", &exp)
		f.code, f.details, f.retry = exp.Code, exp.Details, exp.Retryable
		out = append(out, f)
	}
	if len(out) == 0 {
		t.Fatal("no fixtures in testdata/")
	}
	return out
}

func readJSON(t testing.TB, p string, v any) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
}

func parseLogFixture(t testing.TB, p string) fixture {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	f := fixture{name: strings.TrimSuffix(filepath.Base(p), ".log"), details: map[string]string{}}
	stream := "stderr"
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Text()
		n += len(line) + 1
		if line == "---" {
			break
		}
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "# "), ":")
		if !ok {
			t.Fatalf("%s: bad header line %q", p, line)
		}
		v = strings.TrimSpace(v)
		atoi := func() int {
			x, err := strconv.Atoi(v)
			if err != nil {
				t.Fatalf("%s: %s: %v", p, k, err)
			}
			return x
		}
		switch {
		case k == "code":
			f.code = v
		case strings.HasPrefix(k, "detail."):
			f.details[strings.TrimPrefix(k, "detail.")] = v
		case k == "retryable":
			r := v == "true"
			f.retry = &r
		case k == "exit_code":
			f.in.ExitCode = atoi()
		case k == "signal":
			f.in.Signal = v
		case k == "stream":
			stream = v
		case k == "command":
			f.in.Command = strings.Fields(v)
		case k == "sandbox":
			f.in.Sandbox = v
		case k == "oom_killed":
			f.in.OOMKilled = v == "true"
		case k == "timed_out":
			f.in.TimedOut = v == "true"
		case k == "cancelled":
			f.in.Cancelled = v == "true"
		case k == "stalled":
			f.in.Stalled = v == "true"
		case k == "smoke":
			f.in.Smoke = v == "true"
		case k == "sandbox_error":
			f.in.SandboxError = v
		case k == "peak_rss":
			f.in.PeakRSSBytes = uint64(atoi())
		case k == "memory_limit":
			f.in.Limits.MemoryBytes = int64(atoi())
		case k == "note":
		default:
			t.Fatalf("%s: unknown header key %q", p, k)
		}
	}
	body := ""
	if n < len(b) {
		body = string(b[n:])
	}
	if stream == "stdout" {
		f.in.StdoutTail = body
	} else {
		f.in.StderrTail = body
	}
	return f
}

func TestFixtures(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.name, func(t *testing.T) {
			got := Classify(f.in)
			if got == nil {
				t.Fatal("Classify returned nil")
			}
			if got.Code != f.code {
				b, _ := json.MarshalIndent(got, "", "  ")
				t.Fatalf("code = %s, want %s\n%s", got.Code, f.code, b)
			}
			for k, want := range f.details {
				if g := got.Details[k]; g != want {
					t.Errorf("details[%q] = %q, want %q (message: %s)", k, g, want, got.Message)
				}
			}
			if f.retry != nil && got.Retryable != *f.retry {
				t.Errorf("retryable = %v, want %v", got.Retryable, *f.retry)
			}
			checkFailure(t, got)
		})
	}
}

// checkFailure asserts what every answer must have.
func checkFailure(t *testing.T, f *sdk.Failure) {
	t.Helper()
	if !sdk.ValidCode(f.Code) {
		t.Errorf("invalid code %q", f.Code)
	}
	if f.Message == "" {
		t.Error("empty message")
	}
	if f.Confidence <= 0 || f.Confidence > 1 {
		t.Errorf("confidence %v out of (0,1]", f.Confidence)
	}
	if f.Code != sdk.CodeNonzeroExit && f.Code != sdk.CodeCancelled && len(f.Suggestions) == 0 {
		t.Errorf("%s without suggestions", f.Code)
	}
}
