package cli

import (
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// quickRun reads the command lines of `runbox run` that agents and scripts
// type most, without kong: a few long flags, then "--" and the command.
// Building kong's model costs a fresh process ~1.5–2 ms (reflection over
// every flag's tag, interpolation of every help text), about a fifth of
// `runbox run -- true` end to end (measured side by side: 9.35 ms without
// quickRun, 7.28 ms with it; docs/RATIONALE.md, "One of each"). Since
// kong builds only the model of the command a line names (grammar.go),
// the line quickRun takes saves less but still ~0.7 ms of client CPU:
// `run -d -- true` 2.9–3.4 ms against 3.7–4.0 ms for `run -d --timeout
// 0s -- true`, which kong parses (perf stat -r 40, three rounds). Anything else — another flag, a short
// flag other than -d, a flag given twice, a value that looks like a flag,
// help, no "--" — reports ok false and goes to kong as before, so kong
// stays the one definition of the grammar; TestQuickRunAgreesWithKong
// holds the two to the same result for every line quickRun takes.
//
// The globals it knows (--home, --json) may also come before "run", as in
// `runbox --home H run -- CMD`: kong reads a global anywhere, so they
// are read as if given after it.
func quickRun(args []string) (cmd *runOnly, ok bool) {
	args = globalsAfterRun(args)
	if len(args) < 3 || args[0] != "run" {
		return nil, false
	}
	var c runOnly
	if !applyDefaults(reflect.ValueOf(&c).Elem()) {
		return nil, false
	}
	seen := map[string]bool{}
	i := 1
	for ; i < len(args) && args[i] != "--"; i++ {
		name, value, hasValue := strings.Cut(args[i], "=")
		if name == "-d" {
			name = "--detach"
		}
		if seen[name] {
			return nil, false
		}
		seen[name] = true
		switch name {
		case "--json", "--detach", "--shell", "--snapshot", "--no-record":
			if hasValue {
				return nil, false
			}
			switch name {
			case "--json":
				c.JSON = true
			case "--detach":
				c.Run.Detach = true
			case "--snapshot", "--no-record": // record.go
				c.Run.Snapshot = c.Run.Snapshot || name == "--snapshot"
				c.Run.NoRecord = c.Run.NoRecord || name == "--no-record"
			default:
				c.Run.Shell = true
			}
			continue
		case "--home", "--sandbox", "--name", "--image", "--isolate":
		default:
			return nil, false
		}
		if !hasValue {
			if i+1 >= len(args) {
				return nil, false
			}
			i++
			value = args[i]
		}
		if value == "" || strings.HasPrefix(value, "-") {
			return nil, false
		}
		switch name {
		case "--home":
			c.Home = value
		case "--sandbox":
			if value != "auto" && value != "process" && value != "docker" && value != "slurm" {
				return nil, false
			}
			c.Run.Sandbox = value
		case "--isolate":
			if value != "none" && value != "net" && value != "fs" && value != "full" {
				return nil, false
			}
			c.Run.Isolate = value
		case "--name":
			c.Run.Name = value
		case "--image":
			c.Run.Image = value
		}
	}
	if i+1 >= len(args) {
		return nil, false // no "--", or nothing after it
	}
	if !seen["--home"] {
		c.Home = os.Getenv("RUNBOX_HOME")
	}
	// kong keeps the separator in the passthrough argument.
	c.Run.Command = append([]string{"--"}, args[i+1:]...)
	return &c, true
}

// globalsAfterRun moves --home and --json given before "run" to just
// after it; any other line comes back as it was.
func globalsAfterRun(args []string) []string {
	i := 0
	for i < len(args) && args[i] != "run" {
		switch {
		case args[i] == "--json" || strings.HasPrefix(args[i], "--home="):
			i++
		case args[i] == "--home" && i+1 < len(args):
			i += 2
		default:
			return args
		}
	}
	if i == 0 || i == len(args) {
		return args
	}
	out := make([]string, 0, len(args))
	out = append(out, "run")
	out = append(out, args[:i]...)
	return append(out, args[i+1:]...)
}

// applyDefaults sets the fields of struct v (embedded structs included)
// that carry a default:"..." tag, as kong would. It reports false for a
// default of a kind it does not know, and the caller then leaves the
// parsing to kong.
func applyDefaults(v reflect.Value) bool {
	t := v.Type()
	for i := range t.NumField() {
		f, fv := t.Field(i), v.Field(i)
		if f.Type.Kind() == reflect.Struct && f.Type != reflect.TypeOf(time.Time{}) {
			if !applyDefaults(fv) {
				return false
			}
			continue
		}
		def, ok := f.Tag.Lookup("default")
		if !ok || def == "" {
			continue
		}
		switch {
		case f.Type == reflect.TypeOf(time.Duration(0)):
			d, err := time.ParseDuration(def)
			if err != nil {
				return false
			}
			fv.SetInt(int64(d))
		case f.Type.Kind() == reflect.String:
			fv.SetString(def)
		case f.Type.Kind() == reflect.Bool:
			b, err := strconv.ParseBool(def)
			if err != nil {
				return false
			}
			fv.SetBool(b)
		default:
			return false
		}
	}
	return true
}

// runOnly is what quickRun fills: the globals and the run command, the
// same struct fields kong would fill in CLI.
type runOnly struct {
	Globals
	Run RunCmd
}
