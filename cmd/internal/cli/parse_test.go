package cli

import (
	"reflect"
	"testing"
)

// TestRunModelAgreesWithFullCLI: parse's small model for `runbox run`
// must read every argv exactly as the full CLI does.
func TestRunModelAgreesWithFullCLI(t *testing.T) {
	t.Setenv("RUNBOX_HOME", "/tmp/some-home")
	argvs := [][]string{
		{"run", "--", "true"},
		{"run", "--sandbox", "process", "--", "true"},
		{"run", "-d", "--json", "--home", "/x", "--", "sh", "-c", "echo hi"},
		{"run", "--sandbox=docker", "--image", "busybox", "--memory", "512m", "--cpus", "1.5", "--pids", "64",
			"--network", "bridge", "--gpus", "all", "--read-only", "--keep-container", "--", "true"},
		{"run", "-e", "A=1", "-e", "B", "--clean-env", "--env-allow", "PATH", "--setup", "pip install x",
			"--setup", "echo 2", "--asset", "a:b", "--stdin", "-", "--timeout", "30m", "--grace", "2s",
			"--shell", "--name", "job", "--label", "k=v", "--label", "team=ml", "--stall-timeout", "1m", "--", "python", "train.py"},
		{"run", "-w", ".", "python", "train.py", "--epochs", "3"},
		{"run", "--", "python", "train.py", "--help"},
	}
	for _, args := range argvs {
		var full CLI
		p, err := newParser(&full)
		if err != nil {
			t.Fatal(err)
		}
		kctx, err := p.Parse(args)
		if err != nil {
			t.Fatalf("%q: full CLI: %v", args, err)
		}
		fast, globals, err := parse(args)
		if err != nil {
			t.Fatalf("%q: parse: %v", args, err)
		}
		if fast.Command() != kctx.Command() {
			t.Errorf("%q: command %q, full CLI %q", args, fast.Command(), kctx.Command())
		}
		got, ok := fast.Model.Target.Addr().Interface().(*runOnly)
		if !ok {
			t.Fatalf("%q: parsed with %T, want the run-only model", args, fast.Model.Target.Addr().Interface())
		}
		if !reflect.DeepEqual(got.Run, full.Run) || !reflect.DeepEqual(*globals, full.Globals) {
			t.Errorf("%q:\n got %+v %+v\nwant %+v %+v", args, got.Run, *globals, full.Run, full.Globals)
		}
	}
}

// TestRunModelFallsBack: help, and whatever the small model rejects, are
// the full CLI's to answer, so messages and help text stay the same.
func TestRunModelFallsBack(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--sandbox", "nowhere", "--", "true"},
		{"run", "--timeout", "soon", "--", "true"},
	} {
		var full CLI
		p, err := newParser(&full)
		if err != nil {
			t.Fatal(err)
		}
		_, want := p.Parse(args)
		_, _, got := parse(args)
		if want == nil || got == nil || got.Error() != want.Error() {
			t.Errorf("%q: error %v, full CLI says %v", args, got, want)
		}
	}
	for _, args := range [][]string{{"run", "--help"}, {"run", "-h", "--", "x"}} {
		if !asksHelp(args) {
			t.Errorf("%q: help not seen", args)
		}
	}
	if asksHelp([]string{"run", "--", "python", "-h"}) {
		t.Error("the command's own -h taken for runbox's")
	}
}
