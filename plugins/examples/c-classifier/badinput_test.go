package cclassifier_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sdk"
)

// TestBadInput: through the runtime, JSON that is a poor ClassifyInput
// (huge, deep, wrongly typed, invalid UTF-8, lone surrogates) gets an
// answer in valid UTF-8 JSON, a result or null, never a trap; the same
// instance answers a good input after.
func TestBadInput(t *testing.T) {
	wasm := filepath.Join(buildPlugin(t), "r-julia.wasm")
	ctx := context.Background()
	// One instance, so that every case runs after the previous ones.
	h, err := plugins.NewHost(ctx, plugins.Config{Files: []string{wasm}, Logger: quiet(), MaxInstances: 1, PoolSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)

	noise := strings.Repeat("epoch 3 step 1200 loss 0.3172 lr 1e-4 caf\u00e9\n", 85_000) // ~3.8 MiB
	rOOM := "Error: cannot allocate vector of size 12.1 Gb\n"
	long := strings.Repeat("x", 3<<20)
	tail := func(s string) string {
		b, _ := json.Marshal(map[string]any{"exit_code": 1, "limits": map[string]any{}, "stderr_tail": s})
		return string(b)
	}
	for _, tc := range []struct {
		name, input string
		check       func(t *testing.T, f *sdk.Failure)
	}{
		{name: "nested deep but valid", input: `{"progress": ` + strings.Repeat(`{"a":[`, 4000) + strings.Repeat(`]}`, 4000) + `, "stderr_tail": "` + strings.TrimSuffix(rOOM, "\n") + `"}`,
			check: wantCode(sdk.CodeOOMKilled)},
		{name: "huge numbers", input: `{"exit_code": 123456789012345678901234567890, "limits": {"memory_bytes": -99999999999999999999999}, "stderr_tail": "x"}`},
		{name: "wrong types", input: `{"exit_code": "1", "limits": [1], "stderr_tail": 7, "stdout_tail": {"a": "Error: cannot allocate vector of size 1 Gb"}}`},
		{name: "huge tail, match at the end", input: tail(noise + rOOM), check: wantCode(sdk.CodeOOMKilled)},
		{name: "huge tail, no match", input: tail(noise)},
		// Only the last 64 KiB are searched, as much as runbox sends.
		{name: "huge tail, match before the window", input: tail(rOOM + noise)},
		{name: "one 3 MiB line", input: tail(long + "Error: cannot allocate vector of size " + long[:40<<10]), check: func(t *testing.T, f *sdk.Failure) {
			wantCode(sdk.CodeOOMKilled)(t, f)
			if len(f.Evidence) != 1 || len(f.Evidence[0]) > 300 || len(f.Details["requested"]) > 32 {
				t.Errorf("evidence and details not clipped: %d bytes, requested %d bytes", len(f.Evidence[0]), len(f.Details["requested"]))
			}
		}},
		{name: "invalid UTF-8", input: "{\"stderr_tail\": \"there is no package called 'p\xff\xc3\x28k\xed\xa0\x80g'\"}", check: func(t *testing.T, f *sdk.Failure) {
			wantCode(sdk.CodeModuleNotFound)(t, f)
			if m := f.Details["module"]; m != "p\ufffd\ufffd(k\ufffd\ufffd\ufffdg" {
				t.Errorf("module %q: want each invalid byte as U+FFFD", m)
			}
		}},
		{name: "lone surrogates", input: `{"stderr_tail": "there is no package called 'a\ud800b\udc00c'"}`, check: func(t *testing.T, f *sdk.Failure) {
			wantCode(sdk.CodeModuleNotFound)(t, f)
			if m := f.Details["module"]; m != "a\ufffdb\ufffdc" {
				t.Errorf("module %q: want lone surrogates as U+FFFD", m)
			}
		}},
		{name: "size missing", input: tail("Error: cannot allocate vector of size \nExecution halted\n"), check: func(t *testing.T, f *sdk.Failure) {
			wantCode(sdk.CodeOOMKilled)(t, f)
			if r, ok := f.Details["requested"]; ok {
				t.Errorf("requested = %q, want none", r)
			}
		}},
		{name: "spaces before a needle that starts with one", input: tail("   not found in current path\n")},
		{name: "no closing quote", input: tail("there is no package called \u2018ggplot2\nExecution halted")},
		{name: "quote at the very end", input: tail("there is no package called \xe2\x80")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := h.CallJSON(ctx, wasm, sdk.KindClassifier, []byte(tc.input))
			if err != nil {
				t.Fatalf("err = %v, want an answer", err)
			}
			if raw != nil && (!utf8.Valid(raw) || !json.Valid(raw)) {
				t.Fatalf("answer is not valid UTF-8 JSON: %q", raw)
			}
			var f *sdk.Failure
			if raw != nil {
				f = new(sdk.Failure)
				if err := json.Unmarshal(raw, f); err != nil {
					t.Fatal(err)
				}
			}
			if tc.check == nil {
				if f != nil {
					t.Fatalf("want no opinion, got %+v", f)
				}
				return
			}
			if f == nil {
				t.Fatal("no answer")
			}
			tc.check(t, f)
		})
	}
	// The instance that took all of the above still answers.
	raw, err := h.CallJSON(ctx, wasm, sdk.KindClassifier, []byte(tail(rOOM)))
	if err != nil || !strings.Contains(string(raw), `"OOM_KILLED"`) {
		t.Fatalf("after the bad inputs: %s, %v", raw, err)
	}
}

func wantCode(code string) func(*testing.T, *sdk.Failure) {
	return func(t *testing.T, f *sdk.Failure) {
		t.Helper()
		if f.Code != code {
			t.Errorf("code %s (%s), want %s", f.Code, f.Message, code)
		}
	}
}

// TestNotJSON: bytes that are not JSON, which the host never sends (it
// encodes every input with encoding/json), given straight to the exports:
// the guest answers {"error": ...} saying where, never traps, and the
// same instance then answers a good input. So does an impossible alloc.
func TestNotJSON(t *testing.T) {
	g := newGuest(t, filepath.Join(buildPlugin(t), "r-julia.wasm"))
	ctx := context.Background()
	for _, tc := range []struct{ name, input, err string }{
		{name: "not JSON", input: "Error: cannot allocate vector of size 1 Gb", err: "expected a JSON object at byte 0"},
		{name: "empty", input: "", err: "expected a JSON object"},
		{name: "array", input: `[{"exit_code": 1}]`, err: "expected a JSON object"},
		{name: "truncated string", input: `{"exit_code": 1, "stderr_tail": "Error: cannot allo`, err: "unterminated string"},
		{name: "truncated object", input: `{"exit_code": 1,`, err: "expected a string"},
		{name: "text after", input: `{"exit_code": 1} {}`, err: "text after the JSON value"},
		{name: "NUL after", input: "{\"exit_code\": 1}\x00", err: "text after the JSON value"},
		{name: "bad escape", input: `{"stderr_tail": "\q"}`, err: "bad escape"},
		{name: "short unicode escape", input: `{"stderr_tail": "\u12"}`, err: `bad \u escape`},
		{name: "raw control character", input: "{\"stderr_tail\": \"a\tb\"}", err: "control character"},
		{name: "bad number", input: `{"exit_code": 01}`, err: "expected ',' or '}'"},
		{name: "bad literal", input: `{"oom_killed": tru}`, err: "invalid value"},
		{name: "trailing comma", input: `{"exit_code": 1,}`, err: "expected a string"},
		{name: "nested past the limit", input: `{"progress": ` + strings.Repeat("[", 200_000), err: "nested too deeply"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := g.classify(ctx, []byte(tc.input))
			if err != nil {
				t.Fatalf("no answer: %v", err)
			}
			var env sdk.Envelope
			if err := json.Unmarshal([]byte(out), &env); err != nil || env.Result != nil {
				t.Fatalf("answer %q is not an error envelope (%v)", out, err)
			}
			if !strings.HasPrefix(env.Error, "input is not a ClassifyInput JSON object: ") || !strings.Contains(env.Error, tc.err) {
				t.Errorf("error %q, want one containing %q", env.Error, tc.err)
			}
		})
	}
	// An allocation the memory limit cannot give, or a negative size,
	// answers 0 (the host then fails the call) instead of trapping.
	for _, size := range []uint64{0x7fffffff, 0xffffffff} {
		res, err := g.mod.ExportedFunction("runbox_alloc").Call(ctx, size)
		if err != nil || res[0] != 0 {
			t.Errorf("runbox_alloc(%#x) = %v, %v; want 0", size, res, err)
		}
	}
	out, err := g.classify(ctx, []byte(`{"exit_code": 1, "stderr_tail": "ERROR: OutOfMemoryError()"}`))
	if err != nil || !strings.Contains(out, `"OOM_KILLED"`) {
		t.Fatalf("after the bad inputs: %s, %v", out, err)
	}
}
