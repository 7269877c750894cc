package store

import (
	"context"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox"
)

// Names that say token, PAT, secret, key, password or credential — as a
// word or a whole name part, in any case style — are redacted whatever the
// value (GITHUB_PAT=... was stored in clear while ghp_... values were
// redacted); names that only look alike are not, so a stored spec keeps
// the settings a reader needs.
func TestSecretNamesAndValues(t *testing.T) {
	const v = "plain-value-123"
	for _, tt := range []struct {
		kv     string
		secret bool
	}{
		// Names, with a value that looks like nothing.
		{"GITHUB_PAT=" + v, true},
		{"GH_PAT=" + v, true},
		{"AZURE_DEVOPS_EXT_PAT=" + v, true},
		{"PAT=" + v, true},
		{"githubPat=" + v, true},
		{"HF_TOKEN=" + v, true},
		{"HUGGING_FACE_HUB_TOKEN=" + v, true},
		{"SLACK_BOT_TOKEN=" + v, true},
		{"ACCESSTOKEN=" + v, true},
		{"apiToken=" + v, true},
		{"AWS_SECRET_ACCESS_KEY=" + v, true},
		{"AWS_SESSION_TOKEN=" + v, true},
		{"OPENAI_API_KEY=" + v, true},
		{"ANTHROPIC_API_KEY=" + v, true},
		{"apiKey=" + v, true},
		{"STRIPE_KEY=" + v, true},
		{"SSH_KEY_FILE=" + v, true},
		{"LICENSE_KEYS=" + v, true},
		{"DB_CREDS=" + v, true},
		{"GOOGLE_APPLICATION_CREDENTIALS=" + v, true},
		{"MY_PASSWORD=" + v, true},
		{"client-secret=" + v, true},
		{"NPM_AUTH_TOKEN=" + v, true},
		{"WANDB_API_KEY=" + v, true},
		// Look-alike names, kept.
		{"KEYBOARD_LAYOUT=us", false},
		{"KEYMAP=us", false},
		{"PATH=/usr/bin", false},
		{"PYTHONPATH=/src", false},
		{"PATTERN=*.py", false},
		{"MANPATH=/usr/share/man", false},
		{"TOKENIZERS_PARALLELISM=false", false},
		{"MAX_TOKENS=4096", false},
		{"maxNewTokens=512", false},
		{"XDG_SESSION_TYPE=x11", false},
		{"GIT_AUTHOR_NAME=Ann", false},
		{"PASSENGERS=3", false},
		{"PWD=/home/ann", false},
		{"HOSTNAME=node1", false},
		{"CUDA_VISIBLE_DEVICES=0", false},
		{"LANG=C.UTF-8", false},
		{"SPATIAL_DIMS=3", false},
		// Values that are secrets whatever the name.
		{"X=ghp_abcdefghijklmnopqrstuvwx", true},
		{"X=github_pat_11ABCDEFG0123456789_abcdef", true},
		{"X=glpat-abcdefghijklmnopqrst", true},
		{"X=sk-ant-api03-abcdefghijklmnop", true},
		{"X=xoxb-1234567890-abcdefghij", true},
		{"X=hf_abcdefghijklmnopqrstuvwx", true},
		{"X=AKIAABCDEFGHIJKLMNOP", true},
		{"X=-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaA==", true},
		{"X=eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NSJ9.sig", true},
		{"X=https://user:hunter2@example.com/repo.git", true},
		// Values that are not.
		{"X=https://example.com/a", false},
		{"X=skeleton-key-free", false},
		{"X=eyes", false},
	} {
		want := tt.kv
		if tt.secret {
			want = tt.kv[:len(tt.kv)-len(valueOf(tt.kv))] + Redacted
		}
		if got := RedactEnv([]string{tt.kv})[0]; got != want {
			t.Errorf("RedactEnv(%q) = %q, want %q", tt.kv, got, want)
		}
	}
}

func valueOf(kv string) string {
	for i := range kv {
		if kv[i] == '=' {
			return kv[i+1:]
		}
	}
	return ""
}

// The store on disk never holds GITHUB_PAT's value.
func TestPATNeverStored(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir)
	r := &Run{Spec: sandbox.Spec{Env: []string{"GITHUB_PAT=pat-value-77e1", "EPOCHS=3"}}}
	if err := s.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	got, _ := s.GetRun(context.Background(), r.ID)
	if strings.Join(got.Spec.Env, " ") != "GITHUB_PAT=<redacted> EPOCHS=3" {
		t.Fatalf("stored env: %v", got.Spec.Env)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	grepDir(t, dir, "pat-value-77e1")
}
