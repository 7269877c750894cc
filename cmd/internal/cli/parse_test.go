package cli

import (
	"context"
	"os"
	"reflect"
	"testing"

	"github.com/alecthomas/kong"
)

// parseFull parses args with the whole CLI's kong model.
func parseFull(t *testing.T, args []string) (*CLI, *kong.Context, error) {
	t.Helper()
	var full CLI
	p, err := newParser(&full)
	if err != nil {
		t.Fatal(err)
	}
	kctx, err := p.Parse(args)
	return &full, kctx, err
}

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
		full, kctx, err := parseFull(t, args)
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
		_, _, want := parseFull(t, args)
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

// recordingEngine notes the commands handed to it.
type recordingEngine struct{ got []any }

func (r *recordingEngine) Run(_ context.Context, _ *App, cmd any) error {
	r.got = append(r.got, cmd)
	return nil
}

// TestEngineCommands: every command that goes to runboxd is under a
// top-level command in EngineCommands (runbox hands those over before
// parsing), and the commands runbox runs itself are not.
func TestEngineCommands(t *testing.T) {
	dir := t.TempDir()
	file := dir + "/f"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("RUNBOX_HOME", dir)
	for _, args := range [][]string{
		{"analyze", file}, {"daemon"},
		{"plugins", "ls"}, {"plugins", "info", "x"}, {"plugins", "test", file}, {"plugins", "new", "--kind", "progress", "x"},
		{"plugins", "install", dir}, {"plugins", "remove", "x"}, {"plugins", "pack", dir, "out"}, {"plugins", "verify", dir},
	} {
		var e recordingEngine
		if code := Main(args, &e); code != 0 || len(e.got) != 1 {
			t.Errorf("%q: exit %d, engine got %v", args, code, e.got)
		}
		if !IsEngineCommand(args[0]) {
			t.Errorf("%q goes to the engine but %q is not in EngineCommands", args, args[0])
		}
	}
	for _, name := range []string{"run", "plan", "exec", "status", "wait", "stop", "logs", "ls", "retry", "backends", "version"} {
		if IsEngineCommand(name) {
			t.Errorf("%s is runbox's own command, listed in EngineCommands", name)
		}
	}
}
