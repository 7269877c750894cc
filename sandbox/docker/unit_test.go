package docker

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// These tests need no daemon.

func TestSignalName(t *testing.T) {
	for code, want := range map[int]string{0: "", 1: "", 128: "", 130: "SIGINT", 137: "SIGKILL", 139: "SIGSEGV", 143: "SIGTERM", 255: ""} {
		if got := signalName(code); got != want {
			t.Errorf("signalName(%d) = %q, want %q", code, got, want)
		}
	}
}

func TestGPURequest(t *testing.T) {
	for in, want := range map[string]string{"all": "-1 []", "2": "2 []", "device=0,1": "0 [0 1]"} {
		r, err := gpuRequest(in)
		if err != nil || fmt.Sprint(r.Count, r.DeviceIDs) != want {
			t.Errorf("gpuRequest(%q) = %v %v, want %s", in, r, err, want)
		}
	}
	if _, err := gpuRequest("lots"); err == nil {
		t.Error("no error for a bad gpus value")
	}
}

func TestBuildPlanRejects(t *testing.T) {
	ws := t.TempDir()
	o := Options{Exe: "/bin/true", DefaultPids: DefaultPids}
	ok := sandbox.Spec{RunID: "r", Command: []string{"true"}, Workdir: ws}
	for name, mod := range map[string]func(*sandbox.Spec){
		"no command":               func(s *sandbox.Spec) { s.Command = nil },
		"no workdir":               func(s *sandbox.Spec) { s.Workdir = "" },
		"bad user":                 func(s *sandbox.Spec) { s.User = "alice" },
		"bad network":              func(s *sandbox.Spec) { s.Network = "overlay" },
		"asset escapes":            func(s *sandbox.Spec) { s.Assets = []sandbox.Asset{{Src: ws, Dst: "../x"}} },
		"asset over the workspace": func(s *sandbox.Spec) { s.Assets = []sandbox.Asset{{Src: ws, Dst: "./"}} },
		"two stdins":               func(s *sandbox.Spec) { s.Stdin, s.StdinFile = []byte("x"), "/dev/null" },
	} {
		s := ok
		mod(&s)
		if _, err := buildPlan(s, "img", nil, o); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestBuildPlan checks what the container is given: runbox as its init,
// no log driver, the default pids limit, and no env (secrets go through
// the box, not the config docker inspect shows).
func TestBuildPlan(t *testing.T) {
	o := Options{Exe: "/bin/true", DefaultPids: DefaultPids}
	spec := sandbox.Spec{RunID: "r", Command: []string{"echo", "hi"}, Workdir: t.TempDir(),
		Env: []string{"TOKEN=s3cret"}, Timeout: time.Minute}
	p, err := buildPlan(spec, "img", []string{"/entry"}, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(p.config.Entrypoint, " "); got != InitMount {
		t.Errorf("entrypoint %q", got)
	}
	if got := strings.Join(p.inner.Command, " "); got != "/entry echo hi" {
		t.Errorf("inner command %q", got)
	}
	if len(p.config.Env) != 0 || !slices.Contains(p.inner.Env, "TOKEN=s3cret") {
		t.Errorf("env: config %v, inner %v", p.config.Env, p.inner.Env)
	}
	if p.host.LogConfig.Type != "none" || p.host.Init != nil && *p.host.Init {
		t.Errorf("log driver %q, docker init %v", p.host.LogConfig.Type, p.host.Init)
	}
	if p.host.PidsLimit == nil || *p.host.PidsLimit != DefaultPids {
		t.Errorf("pids limit %v, want the default %d", p.host.PidsLimit, DefaultPids)
	}
	spec.Limits.Pids = 7
	if p, _ := buildPlan(spec, "img", nil, o); *p.host.PidsLimit != 7 {
		t.Errorf("pids limit %d, want the spec's 7", *p.host.PidsLimit)
	}
	if p.inner.Timeout != time.Minute || p.inner.LogPath != BoxMount+"/log" || p.inner.StateDir != BoxMount {
		t.Errorf("inner spec %+v", p.inner)
	}
}
