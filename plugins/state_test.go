package plugins

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sdk"
)

// TestStateFileRestore: a switch-off recorded in the state file applies to
// the same module (source and sha256) until it ends; anything else in the
// file, or a file that cannot be read, leaves the plugin on.
func TestStateFileRestore(t *testing.T) {
	dir := pluginDir(t, "echo")
	src := filepath.Join(dir, "echo.wasm")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	sha := newModule(&Host{cfg: Config{}.withDefaults()}, source{path: src, wasm: b}).sha()
	rec := func(source, sha string, until time.Time) string {
		doc, _ := json.Marshal(stateDoc{Off: []offRecord{{Source: source, SHA256: sha, Reason: "plugin call timed out", Failures: 3, Until: until}}})
		return string(doc)
	}
	later, earlier := time.Now().Add(time.Hour), time.Now().Add(-time.Minute)
	for _, tc := range []struct {
		name, content string
		want          Status
		wantLog       string
	}{
		{"off", rec(src, sha, later), StatusOff, ""},
		{"cooldown over", rec(src, sha, earlier), StatusReady, ""},
		{"rebuilt plugin", rec(src, strings.Repeat("0", 64), later), StatusReady, ""},
		{"other plugin", rec(src+".old", sha, later), StatusReady, ""},
		{"garbage", "{not json", StatusReady, "plugin state ignored"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			state := filepath.Join(t.TempDir(), "state.json")
			if err := os.WriteFile(state, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			h, logs := newTestHost(t, Config{StateFile: state}, dir)
			i := h.Plugins(context.Background())[0]
			if i.Status != tc.want {
				t.Fatalf("status %s, want %s (%+v)", i.Status, tc.want, i)
			}
			if tc.want == StatusOff && (i.OffReason != "plugin call timed out" || i.RetryAt == nil || !i.RetryAt.Equal(later)) {
				t.Fatalf("off: reason %q retry %v", i.OffReason, i.RetryAt)
			}
			if !strings.Contains(logs.String(), tc.wantLog) {
				t.Fatalf("log lacks %q:\n%s", tc.wantLog, logs)
			}
			// Off: no call reaches it; on: it answers.
			if f := h.Classify(context.Background(), sdk.ClassifyInput{ExitCode: 1}); (f == nil) != (tc.want == StatusOff) {
				t.Fatalf("classify = %+v with status %s", f, tc.want)
			}
		})
	}
}
