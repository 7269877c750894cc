package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// matchArgument recognises command-line usage errors from argparse, click,
// typer, absl, Hydra and HfArgumentParser.
func matchArgument(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeArgumentError, conf: 0.95, details: map[string]string{}}
	arg := ""
	switch {
	case argparseError(lc):
		k := strings.Index(lc, "error: ")
		what := l.text[k+7:]
		wl := lc[k+7:]
		switch {
		case strings.HasPrefix(wl, "the following arguments are required:"):
			arg = strings.TrimSpace(what[len("the following arguments are required:"):])
			c.msg = "A required command-line argument is missing: " + arg + "."
		case strings.HasPrefix(wl, "unrecognized arguments:"):
			arg = strings.TrimSpace(what[len("unrecognized arguments:"):])
			c.msg = "The script does not accept the argument(s): " + arg + "."
		case strings.HasPrefix(wl, "argument "):
			arg = strings.TrimSuffix(strings.Fields(what[9:] + " ")[0], ":")
			c.msg = "Bad value for argument " + arg + ": " + clip(what, 200)
		default:
			c.msg = "The command line was rejected: " + clip(what, 200)
		}
		c.details["parser"] = "argparse"
	case has(lc, "no such option", "missing option", "missing argument", "invalid value for", "got unexpected extra argument", "no such command", "missing parameter"):
		for _, m := range []string{"no such option:", "missing option", "missing argument", "invalid value for", "no such command", "missing parameter:"} {
			if k := strings.Index(lc, m); k >= 0 {
				arg = firstQuoted(l.text[k+len(m):])
				if arg == "" {
					arg = strings.Trim(strings.Fields(l.text[k+len(m):] + " ")[0], ".'\"")
				}
				break
			}
		}
		if strings.Contains(lc, "unexpected extra argument") {
			if k := strings.IndexByte(l.text, '('); k >= 0 {
				arg = strings.TrimSuffix(l.text[k+1:], ")")
			}
		}
		c.msg = "The command line was rejected: " + clip(strings.TrimPrefix(strings.TrimPrefix(l.text, "Error: "), "│ "), 200)
		c.details["parser"] = "click"
	case has(lc, "missing required argument", "required arguments were not provided", "required argument", "unknown option", "unrecognized option", "unexpected argument") && sc.usageNear(i):
		// clap, commander and getopt-style parsers: an error line with
		// the program's usage next to it.
		c.msg = "The command line was rejected: " + clip(l.text, 200)
		c.details["parser"] = "cli"
	case has(lc, "unrecognizedflagerror", "unknown command line flag", "flags parsing error", "illegalflagvalueerror"):
		arg = firstQuoted(l.text)
		c.msg = "The command line flags were rejected (absl): " + clip(l.text, 200)
		c.details["parser"] = "absl"
	case strings.Contains(lc, "could not override") || strings.Contains(lc, "is not in struct"):
		arg = firstQuoted(l.text)
		c.msg = "Hydra rejected a config override: " + clip(l.text, 200)
		c.details["parser"] = "hydra"
		c.sugg = []string{"Use `+key=value` to add a key that is not in the config, or check its spelling against the config (`--cfg job`)."}
	case strings.Contains(lc, "not used by the hfargumentparser"):
		if k := strings.IndexByte(l.text, '['); k >= 0 {
			arg = strings.Trim(l.text[k:], "[]")
		}
		c.msg = "Some arguments are not known to HfArgumentParser: " + arg + "."
		c.details["parser"] = "hfargumentparser"
	default:
		return false
	}
	c.details["argument"] = arg
	if arg == "" {
		delete(c.details, "argument")
	}
	if c.sugg == nil {
		c.sugg = []string{"Run the script with --help to see the arguments it accepts, and fix the command line" + argHint(arg) + "."}
		if sc.in.ExitCode == 2 {
			c.conf = 0.97
		}
	}
	sc.add(i, c)
	return true
}

func argHint(arg string) string {
	if arg == "" {
		return ""
	}
	return " (" + clip(arg, 80) + ")"
}

// argparseError matches "prog: error: ..." where prog is one token, as
// argparse prints it; compilers' "x.c:1:2: error:" is excluded.
func argparseError(lc string) bool {
	k := strings.Index(lc, ": error: ")
	if k <= 0 {
		return strings.HasPrefix(lc, "error: the following arguments are required") || strings.HasPrefix(lc, "error: unrecognized arguments")
	}
	prog := lc[:k]
	// A subcommand's prog has spaces ("spacy train", "my tool run"):
	// allowed for a few words when the message is argparse's own.
	if strings.ContainsAny(prog, ":\t") || len(strings.Fields(prog)) > 4 {
		return false
	}
	spaced := strings.Contains(prog, " ")
	rest := lc[k+9:]
	for _, p := range []string{"the following arguments are required", "unrecognized arguments", "argument ", "ambiguous option", "too few arguments", "invalid choice", "one of the arguments", "expected one argument", "not allowed with argument"} {
		if strings.HasPrefix(rest, p) || strings.Contains(rest, p) && p == "invalid choice" && !spaced {
			return true
		}
	}
	return !spaced && strings.HasSuffix(prog, ".py")
}

var gateArgument = []string{"error: ", "required argument", "unknown option", "unrecognized option", "unexpected argument", "no such option", "missing option", "missing argument", "invalid value for", "unexpected extra argument",
	"flag", "could not override", "is not in struct", "hfargumentparser", "no such command", "missing parameter"}

// usageNear reports a "usage:" line within a few lines of i: the mark of
// a command-line parser's rejection.
func (sc *scanner) usageNear(i int) bool {
	for k := max(0, i-3); k < len(sc.lines) && k <= i+6; k++ {
		if lc := strings.TrimSpace(sc.lines[k].lc); strings.HasPrefix(lc, "usage:") || strings.Contains(lc, " usage: ") {
			return true
		}
	}
	return false
}
