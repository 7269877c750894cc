package cli

import (
	"context"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// parseFull parses args with the whole CLI's kong api.
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

// TestParseRun: the lines agents and scripts type most are read as meant,
// flags before "--" are runbox's and everything after is the command's.
func TestParseRun(t *testing.T) {
	t.Setenv("RUNBOX_HOME", "/tmp/some-home")
	cmdOf := func(c *CLI) []string {
		cmd, err := commandArgs(c.Run.Command, "run")
		if err != nil {
			t.Fatal(err)
		}
		return cmd
	}
	tests := []struct {
		args  []string
		check func(c *CLI) bool
	}{
		{[]string{"run", "--", "true"}, func(c *CLI) bool { return reflect.DeepEqual(cmdOf(c), []string{"true"}) && c.Run.Sandbox == "auto" }},
		{[]string{"run", "-d", "--json", "--home", "/x", "--", "sh", "-c", "echo hi"}, func(c *CLI) bool {
			return c.Run.Detach && c.JSON && c.Home == "/x" && len(cmdOf(c)) == 3
		}},
		{[]string{"run", "--sandbox=docker", "--image", "busybox", "--memory", "512m", "--", "true"}, func(c *CLI) bool {
			return c.Run.Sandbox == "docker" && c.Run.Image == "busybox" && c.Run.Memory == "512m"
		}},
		{[]string{"run", "--", "python", "train.py", "--help"}, func(c *CLI) bool {
			return reflect.DeepEqual(cmdOf(c), []string{"python", "train.py", "--help"})
		}},
		{[]string{"run", "-w", ".", "python", "train.py", "--epochs", "3"}, func(c *CLI) bool {
			return reflect.DeepEqual(cmdOf(c), []string{"python", "train.py", "--epochs", "3"})
		}},
	}
	for _, tt := range tests {
		c, _, err := parseFull(t, tt.args)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if !tt.check(c) {
			t.Errorf("%q: parsed as %+v %+v", tt.args, c.Run, c.Globals)
		}
	}
	for _, args := range [][]string{
		{"run", "--sandbox", "nowhere", "--", "true"},
		{"run", "--timeout", "soon", "--", "true"},
	} {
		if _, _, err := parseFull(t, args); err == nil {
			t.Errorf("%q: accepted", args)
		}
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

// TestBadLimitsAreUsageErrors: a limit that cannot mean what it says is
// refused while parsing (exit 2), never taken as "no limit".
func TestBadLimitsAreUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"run", "--timeout=-5s", "--", "true"},
		{"run", "--grace=-1s", "--", "true"},
		{"run", "--stall-timeout=-1s", "--", "true"},
		{"run", "--pids=-3", "--", "true"},
		{"run", "--cpus=-2", "--", "true"},
		{"run", "--memory", "abc", "--", "true"},
		{"run", "--memory=0", "--", "true"},
		{"plan", "--timeout=-5s", "--", "true"},
	} {
		var e recordingEngine
		if code := Main(args, &e); code != 2 {
			t.Errorf("%q: exit %d, want 2", args, code)
		}
	}
	for _, args := range [][]string{
		{"run", "--timeout=5s", "--memory=512m", "--cpus=1.5", "--pids=64", "--", "true"},
	} {
		if _, _, err := parseFull(t, args); err != nil {
			t.Errorf("%q: %v", args, err)
		}
	}
}

// TestVersionFlag: --version, what users try first, prints what the
// version command prints and exits 0, anywhere before the command's own
// arguments; after them it is the command's.
func TestVersionFlag(t *testing.T) {
	for _, line := range []string{"--version", "run --version -- true", "--json --version", "status --version"} {
		var c CLI
		out := parseWith(t, &c, &c.Globals, strings.Fields(line))
		if !out.exited || out.help != "runbox "+Version+"\n" {
			t.Errorf("%q: exited %v, printed %q; want exit and %q", line, out.exited, out.help, "runbox "+Version+"\n")
		}
	}
	for _, line := range []string{"run -- python --version", "run python --version"} {
		c, _, err := parseFull(t, strings.Fields(line))
		if err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		if cmd, err := commandArgs(c.Run.Command, "run"); err != nil || !reflect.DeepEqual(cmd, []string{"python", "--version"}) {
			t.Errorf("%q: command %q (%v), want python --version", line, cmd, err)
		}
	}
}
