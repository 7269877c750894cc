package cli

import (
	"bytes"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

// parsed is what one kong parse of a line gave: its error, or the command
// kong chose with the values of the globals and of the top-level
// command's struct; help is what kong printed (help exits through
// kong.Exit, caught here).
type parsed struct {
	err, command string
	globals      Globals
	cmd          any
	help         string
	exited       bool
}

type exitCaught struct{}

// parseWith parses args with grammar (a *CLI or what oneCommand made), its
// output and exit caught.
func parseWith(t *testing.T, grammar any, globals *Globals, args []string) (out parsed) {
	t.Helper()
	var buf bytes.Buffer
	p, err := newParser(grammar, kong.Writers(&buf, &buf), kong.Exit(func(int) { panic(exitCaught{}) }))
	if err != nil {
		t.Fatalf("%q: building the parser: %v", args, err)
	}
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(exitCaught); !ok {
				panic(r)
			}
			out.exited = true
		}
		out.help = buf.String()
	}()
	kctx, err := p.Parse(args)
	if err != nil {
		out.err = err.Error()
		return out
	}
	out.command = kctx.Command()
	out.globals = *globals
	top, _, _ := strings.Cut(out.command, " ")
	v := reflect.ValueOf(grammar).Elem()
	for i := range v.NumField() {
		f := v.Type().Field(i)
		if _, isCmd := f.Tag.Lookup("cmd"); isCmd && commandCalled(f, top) {
			out.cmd = v.Field(i).Interface()
		}
	}
	return out
}

// checkSameParse fails unless args read with the grammar parse picks gives
// exactly what the whole CLI gives: the same error, or the same command
// with the same values, and the same help text.
func checkSameParse(t *testing.T, args []string) {
	t.Helper()
	var full CLI
	want := parseWith(t, &full, &full.Globals, args)
	grammar, globals := grammarFor(args)
	got := parseWith(t, grammar, globals, args)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q:\nper-command model: %+v\n       whole CLI: %+v", args, got, want)
	}
}

// commandPaths lists every command of the whole CLI's model, nested ones
// included, as the words that select it (["sweep", "status"]), with the
// node.
func commandPaths(t *testing.T) (paths [][]string, nodes []*kong.Node) {
	t.Helper()
	var full CLI
	p, err := newParser(&full)
	if err != nil {
		t.Fatal(err)
	}
	var walk func(prefix []string, n *kong.Node)
	walk = func(prefix []string, n *kong.Node) {
		for _, c := range n.Children {
			if c.Type != kong.CommandNode {
				continue
			}
			path := append(slices.Clone(prefix), c.Name)
			paths, nodes = append(paths, path), append(nodes, c)
			walk(path, c)
		}
	}
	walk(nil, p.Model.Node)
	return paths, nodes
}

// TestOneCommandCoversEveryCommand: every top-level command of the whole
// model, by its name and each alias, gets a per-command model (so none
// silently falls back to the whole one), and that model holds just it.
func TestOneCommandCoversEveryCommand(t *testing.T) {
	paths, nodes := commandPaths(t)
	n := 0
	for i, path := range paths {
		if len(path) != 1 {
			continue
		}
		n++
		for _, name := range append([]string{path[0]}, nodes[i].Aliases...) {
			grammar, _, ok := oneCommand(name)
			if !ok {
				t.Errorf("command %q: no per-command model", name)
				continue
			}
			p, err := newParser(grammar)
			if err != nil {
				t.Fatalf("command %q: %v", name, err)
			}
			if len(p.Model.Children) != 1 || p.Model.Children[0].Name != path[0] {
				t.Errorf("command %q: per-command model holds %d commands", name, len(p.Model.Children))
			}
		}
	}
	if n < 20 {
		t.Fatalf("only %d top-level commands found", n)
	}
	for _, name := range []string{"", "nope", "Run", "help"} {
		if _, _, ok := oneCommand(name); ok {
			t.Errorf("oneCommand(%q) made a model", name)
		}
	}
}

// TestOneCommandAgreesWithKong: for every command in the grammar (nested
// ones too), its help (with the globals before or after it), the command
// alone, the command with each of its flags, and a flag it does not have
// read exactly as with the whole CLI: same values, same error, same help
// text byte for byte.
func TestOneCommandAgreesWithKong(t *testing.T) {
	t.Setenv("RUNBOX_HOME", "/tmp/from-env")
	paths, nodes := commandPaths(t)
	for i, path := range paths {
		node := nodes[i]
		lines := [][]string{
			path,
			append(slices.Clone(path), "--help"),
			append(slices.Clone(path), "-h"),
			append([]string{"--json", "--home", "/h"}, append(slices.Clone(path), "--help")...),
			append(slices.Clone(path), "--no-such-flag"),
			append(slices.Clone(path), "--jsn"), // kong suggests --json
			append(append([]string{"--home=/h", "--progress-lines"}, path...), "--json"),
		}
		// Fill the positionals, then give each flag of the command a value
		// of its kind.
		base := slices.Clone(path)
		for _, pos := range node.Positional {
			base = append(base, valueFor(pos))
			if pos.IsSlice() || pos.Passthrough {
				break
			}
		}
		lines = append(lines, base, append(slices.Clone(base), "extra", "words"))
		for _, f := range node.Flags {
			if f.Name == "help" {
				continue
			}
			line := slices.Clone(path)
			if f.IsBool() {
				line = append(line, "--"+f.Name)
			} else {
				line = append(line, "--"+f.Name, valueFor(f.Value))
			}
			lines = append(lines, append(line, base[len(path):]...))
		}
		for _, line := range lines {
			checkSameParse(t, line)
		}
	}
}

// valueFor returns a word kong can read into v: its first enum value, or
// a number, a duration or a word.
func valueFor(v *kong.Value) string {
	if v.Enum != "" {
		first, _, _ := strings.Cut(v.Enum, ",")
		return strings.TrimSpace(first)
	}
	t := v.Target.Type()
	for t.Kind() == reflect.Slice || t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t.String() == "time.Duration":
		return "2s"
	case t.Kind() >= reflect.Int && t.Kind() <= reflect.Float64:
		return "3"
	case t.Kind() == reflect.Map:
		return "k=v"
	}
	if v.Passthrough {
		return "--"
	}
	return "a=1"
}

// Hand-written lines as users type them, bad ones too, and the lines that
// must keep the whole model (top-level help, unknown commands, a flag
// before the command that is not a plain global).
func TestOneCommandTypicalLines(t *testing.T) {
	t.Setenv("RUNBOX_HOME", "")
	for _, line := range []string{
		"run -d -w /tmp/dir -- true",
		"run --allow-net example.com:443 --no-record -- curl x",
		"--home /h run -w . python train.py --epochs 3",
		"run",
		"run --sandbox nowhere -- true",
		"exec -d plan.json",
		"exec",
		"status @last",
		"--json status",
		"status a b",
		"ls",
		"ls --json -n 5",
		"logs -f @last",
		"wait @last",
		"stop @last",
		"sweep --param lr=1,2 -- echo {lr}",
		"sweep status @last",
		"sweep bogus",
		"plugins trust add key.pub",
		"plugins index ls",
		"plugins",
		"diff a b",
		"compare a b c",
		"version",
		"--json version",
		"--version",
		"--json --version",
		"run --version -- true",
		"status --version",
		"run -- python --version",
		"--progress-lines run -- true",
		"--help",
		"-h",
		"",
		"--json",
		"--home /h --json --help",
		"--progress-lines -h",
		"--help --help",
		"--home=/h",
		"--help --home",
		"--help nope",
		"nope",
		"rn -- true",
		"--home",
		"--home --json run -- true",
		"--json=true run -- true",
		"--help run",
		"-- run -- true",
	} {
		checkSameParse(t, strings.Fields(line))
	}
}

// commandNamed reads the top level as kong does, and gives up where it
// would have to guess.
func TestCommandNamed(t *testing.T) {
	for _, c := range []struct {
		line, name string
		ok         bool
	}{
		{"run -- true", "run", true},
		{"--home /x --json status @last", "status", true},
		{"--home=/x ls", "ls", true},
		{"--home run run -- run", "run", true},
		{"--progress-lines run", "run", true},
		{"nope", "nope", true}, // oneCommand then falls back
		{"", "", false},
		{"--help run", "", false},
		{"-h", "", false},
		{"--home", "", false},
		{"--home -x run", "", false},
		{"--json=true run", "", false},
		{"-- run", "", false},
	} {
		name, ok := commandNamed(strings.Fields(c.line))
		if name != c.name || ok != c.ok {
			t.Errorf("%q: got %q %v, want %q %v", c.line, name, ok, c.name, c.ok)
		}
	}
}

// BenchmarkNewParser: what building kong's model costs for the whole CLI
// and for the per-command models parse uses (go test -run '^$' -bench
// NewParser ./cmd/internal/cli/).
func BenchmarkNewParser(b *testing.B) {
	b.Run("whole", func(b *testing.B) {
		for b.Loop() {
			var c CLI
			if _, err := newParser(&c); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("command-list", func(b *testing.B) {
		for b.Loop() {
			grammar, _ := commandList()
			if _, err := newParser(grammar); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, name := range []string{"run", "exec", "status", "ls", "logs", "sweep", "plugins"} {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				grammar, _, _ := oneCommand(name)
				if _, err := newParser(grammar); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzOneCommand: lines of commands, globals, flags and words in any order
// read the same with the grammar parse picks as with the whole CLI.
func FuzzOneCommand(f *testing.F) {
	f.Add([]byte{0, 1, 2})
	f.Add([]byte{5, 6, 3, 7, 8})
	f.Add([]byte{9, 10, 11, 12, 13})
	f.Add([]byte{14, 15, 16, 17})
	tokens := []string{"run", "--", "true", "--home", "/h", "--json", "status", "@last",
		"ls", "--help", "-h", "sweep", "--param", "a=1,2", "--progress-lines", "--home=/g",
		"plugins", "trust", "ls", "exec", "-d", "plan1", "nope", "--no-such", "-w", ".",
		"--sandbox", "docker", "logs", "-f", "--json=false", "", "-", "compare", "a", "b",
		"status", "wait", "--timeout", "1s", "index", "add", "version", "help"}
	f.Fuzz(func(t *testing.T, picks []byte) {
		if len(picks) > 12 {
			return
		}
		args := []string{}
		for _, p := range picks {
			args = append(args, tokens[int(p)%len(tokens)])
		}
		checkSameParse(t, args)
	})
}

// topLevelOnly takes only globals and help, never a line with a command
// or anything kong could read otherwise.
func TestTopLevelOnly(t *testing.T) {
	for line, want := range map[string]bool{
		"":                           true,
		"--help":                     true,
		"-h":                         true,
		"--json --home /x --help":    true,
		"--home=/x --progress-lines": true,
		"--help run":                 false,
		"run --help":                 false,
		"--home":                     false,
		"--home -h":                  false,
		"--json=true --help":         false,
		"-- --help":                  false,
		"nope":                       false,
	} {
		if got := topLevelOnly(strings.Fields(line)); got != want {
			t.Errorf("%q: got %v, want %v", line, got, want)
		}
	}
}
