package process

import (
	"slices"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox"
)

// TestConfineEnv: a confined process run loses the variables that point
// at the user's session unless --env passed them, and then a note says
// so; an unconfined run keeps them all.
func TestConfineEnv(t *testing.T) {
	env := []string{"PATH=/bin", "SSH_AUTH_SOCK=/tmp/ssh-a/agent.1", "DISPLAY=:0", "XDG_RUNTIME_DIR=/run/user/0", "TMUX=/tmp/tmux-0/default,1,0"}
	for _, tc := range []struct {
		name, isolate string
		given         []string
		want          []string
		note          string
	}{
		{"none keeps all", "", nil, env, ""},
		{"full drops", "full", nil, []string{"PATH=/bin"}, ""},
		{"net drops", "net", nil, []string{"PATH=/bin"}, ""},
		{"--env keeps", "fs", []string{"DISPLAY=:0"}, []string{"PATH=/bin", "DISPLAY=:0"}, "DISPLAY passed on purpose"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sandbox.Spec{ProcessOptions: sandbox.ProcessOptions{Isolate: tc.isolate}, Env: slices.Clone(env)}
			note := confineEnv(&spec, tc.given)
			if !slices.Equal(spec.Env, tc.want) {
				t.Errorf("env %q, want %q", spec.Env, tc.want)
			}
			if (tc.note == "") != (note == "") || !strings.Contains(note, tc.note) {
				t.Errorf("note %q, want one containing %q", note, tc.note)
			}
		})
	}
}
