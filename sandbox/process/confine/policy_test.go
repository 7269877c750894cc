package confine

import (
	"slices"
	"testing"
)

func TestDropHostEnv(t *testing.T) {
	env := []string{"PATH=/usr/bin", "SSH_AUTH_SOCK=/tmp/ssh-x/agent.1", "DISPLAY=:0", "TMUX=/tmp/tmux-0/default,1,0", "HOME=/root", "DBUS_SESSION_BUS_ADDRESS=unix:path=/run/user/0/bus"}
	out, dropped, kept := DropHostEnv(env, map[string]bool{"DISPLAY": true})
	want := []string{"PATH=/usr/bin", "DISPLAY=:0", "HOME=/root"}
	if !slices.Equal(out, want) {
		t.Errorf("env %q, want %q", out, want)
	}
	if !slices.Equal(dropped, []string{"SSH_AUTH_SOCK", "TMUX", "DBUS_SESSION_BUS_ADDRESS"}) {
		t.Errorf("dropped %q", dropped)
	}
	if !slices.Equal(kept, []string{"DISPLAY"}) {
		t.Errorf("kept %q, want DISPLAY (passed on purpose)", kept)
	}
}
