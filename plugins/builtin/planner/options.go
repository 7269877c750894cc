package planner

import (
	"regexp"
	"strings"
)

// option is one command-line option a script defines.
type option struct {
	names      []string // as written: "--dry-run", "-n"
	lib        string   // argparse, click, typer, absl, shell, ...
	line       int
	help       string
	dest       string // the attribute it sets, when known
	takesValue bool
	valueType  string // int, float, bool, str or "" (unknown)
	subcommand string // the argparse subparser it belongs to
	wiredTo    string // a Trainer argument it feeds: fast_dev_run, max_steps
	eqForm     bool   // shell: matched as --name=*, so pass --name=VALUE
}

var (
	addArgRe      = gate(regexp.MustCompile(`(\w+)\.add_(?:argument|option)\s*\(`), ".add_")
	clickOptRe    = gate(regexp.MustCompile(`(?:^@|\bclick\.)option\s*\(|^@\w+\.option\s*\(`), "option")
	typerOptRe    = gate(regexp.MustCompile(`\btyper\.Option\s*\(`), "typer.Option")
	abslRe        = gate(regexp.MustCompile(`\bDEFINE_(bool|boolean|integer|float|string|enum|multi_string)\s*\(`), "DEFINE_")
	subparserRe   = gate(regexp.MustCompile(`^(\w+)\s*=\s*\w+\.add_parser\s*\(\s*["']([\w.-]+)["']`), "add_parser")
	groupRe       = gate(regexp.MustCompile(`^(\w+)\s*=\s*(\w+)\.add_(?:argument|mutually_exclusive)_group\s*\(`), "_group")
	typerParamRe  = regexp.MustCompile(`(\w+)\s*:\s*(?:Annotated\[\s*)?(\w+)\s*(?:,\s*)?(?:=\s*)?$`)
	wiredRe       = gate(regexp.MustCompile(`\b(fast_dev_run|max_steps|limit_train_batches|max_train_samples)\s*=\s*(?:\w+\.)+(\w+)`), "fast_dev_run", "max_steps", "limit_train_batches", "max_train_samples")
	lightningCLI  = gate(regexp.MustCompile(`\bLightningCLI\s*\(`), "LightningCLI")
	plArgparseRe  = gate(regexp.MustCompile(`\badd_argparse_args\s*\(`), "add_argparse_args")
	hfParserRe    = gate(regexp.MustCompile(`\bHfArgumentParser\s*\(`), "HfArgumentParser")
	hfTrainArgsRe = gate(regexp.MustCompile(`\b\w*(?:TrainingArguments|SFTConfig|GRPOConfig|DPOConfig)\b`), "Arguments", "Config")
)

// maxPerStmt bounds the options read from one statement.
const maxPerStmt = 64

// pyOptions collects the options a Python script defines with argparse,
// optparse, click, typer or absl, plus the ones a framework adds for it.
func (a *analysis) pyOptions(stmts []stmt) {
	subOf := map[string]string{}
	wired := map[string]string{}
	hfTrainArgs := false
	for _, s := range stmts {
		if m := subparserRe.FindStringSubmatch(s.Code); m != nil {
			subOf[m[1]] = m[2]
		}
		if m := groupRe.FindStringSubmatch(s.Bare); m != nil {
			subOf[m[1]] = subOf[m[2]]
		}
		for _, m := range wiredRe.FindAllStringSubmatch(s.Bare, maxPerStmt) {
			wired[m[2]] = m[1]
		}
		hfTrainArgs = hfTrainArgs || hfTrainArgsRe.MatchString(s.Bare)
		for _, m := range addArgRe.FindAllStringSubmatchIndex(s.Bare, maxPerStmt) {
			if o, ok := argparseOption(s, m[1]-1); ok {
				o.subcommand = subOf[s.Bare[m[2]:m[3]]]
				if strings.Contains(s.Bare[m[0]:m[1]], "add_option") {
					o.lib = "optparse"
				}
				a.options = append(a.options, o)
			}
		}
		if loc := clickOptRe.FindStringIndex(s.Bare); loc != nil {
			a.options = append(a.options, clickOption(s, loc[1]-1))
		}
		for _, loc := range typerOptRe.FindAllStringIndex(s.Bare, maxPerStmt) {
			if o, ok := typerOption(s, loc); ok {
				a.options = append(a.options, o)
			}
		}
		for _, m := range abslRe.FindAllStringSubmatchIndex(s.Bare, maxPerStmt) {
			if o, ok := abslOption(s, m[1]-1, s.Bare[m[2]:m[3]]); ok {
				a.options = append(a.options, o)
			}
		}
		if lightningCLI.MatchString(s.Bare) {
			a.options = append(a.options, option{names: []string{"--trainer.fast_dev_run"}, lib: "LightningCLI",
				line: s.Line, takesValue: true, valueType: "int", help: "Lightning Trainer option: run N batches of train/val/test"})
		}
		if plArgparseRe.MatchString(s.Bare) {
			a.options = append(a.options, option{names: []string{"--fast_dev_run"}, lib: "Trainer.add_argparse_args",
				line: s.Line, takesValue: true, valueType: "int", help: "Lightning Trainer option: run N batches of train/val/test"})
		}
		if hfParserRe.MatchString(s.Bare) && hfTrainArgs {
			a.options = append(a.options, option{names: []string{"--max_steps"}, lib: "HfArgumentParser(TrainingArguments)",
				line: s.Line, takesValue: true, valueType: "int", help: "TrainingArguments.max_steps: stop after N optimizer steps"})
		}
	}
	for i := range a.options {
		if w, ok := wired[a.options[i].destName()]; ok {
			a.options[i].wiredTo = w
		}
	}
}

// argparseOption reads parser.add_argument(...) whose '(' is at open.
func argparseOption(s stmt, open int) (option, bool) {
	o := option{lib: "argparse", line: s.Line, takesValue: true}
	action := ""
	for _, arg := range callArgs(s, open) {
		name, val, kw := kwarg(arg)
		if !kw {
			if v, ok := pyLiteral(arg); ok && strings.HasPrefix(v, "-") {
				o.names = append(o.names, v)
			}
			continue
		}
		switch name {
		case "action":
			action, _ = pyLiteral(val)
			if strings.Contains(val, "BooleanOptionalAction") {
				action = "store_true"
			}
		case "help":
			o.help, _ = pyLiteral(val)
		case "dest":
			o.dest, _ = pyLiteral(val)
		case "type":
			o.valueType = pyType(val)
		}
	}
	switch action {
	case "store_true", "store_const", "count", "help", "version", "append_const":
		o.takesValue = false
	case "store_false":
		return o, false // turns something off: not a smoke switch
	}
	return o, len(o.names) > 0
}

// clickOption reads @click.option(...).
func clickOption(s stmt, open int) option {
	o := option{lib: "click", line: s.Line, takesValue: true}
	for _, arg := range callArgs(s, open) {
		name, val, kw := kwarg(arg)
		if !kw {
			v, ok := pyLiteral(arg)
			switch {
			case !ok:
			case strings.Contains(v, "/") && strings.HasPrefix(v, "-"):
				pos, _, _ := strings.Cut(v, "/")
				o.names = append(o.names, strings.TrimSpace(pos))
				o.takesValue = false
			case strings.HasPrefix(v, "-"):
				o.names = append(o.names, v)
			default:
				o.dest = v
			}
			continue
		}
		switch name {
		case "is_flag", "count":
			o.takesValue = val != "True" && o.takesValue
		case "help":
			o.help, _ = pyLiteral(val)
		case "type":
			o.valueType = pyType(val)
		}
	}
	return o
}

// typerOption reads one typer.Option(...) at loc; without explicit names
// the option is named after the parameter it defaults.
func typerOption(s stmt, loc []int) (option, bool) {
	o := option{lib: "typer", line: s.Line, takesValue: true}
	for i, arg := range callArgs(s, loc[1]-1) {
		name, val, kw := kwarg(arg)
		if !kw && i == 0 && (arg == "False" || arg == "True") {
			o.valueType = "bool"
		}
		if !kw {
			if v, ok := pyLiteral(arg); ok && strings.HasPrefix(v, "-") {
				pos, _, _ := strings.Cut(v, "/")
				o.names = append(o.names, strings.TrimSpace(pos))
			}
			continue
		}
		if name == "help" {
			o.help, _ = pyLiteral(val)
		}
	}
	if m := typerParamRe.FindStringSubmatch(s.Bare[max(0, loc[0]-200):loc[0]]); m != nil {
		o.dest = m[1]
		if t := pyType(m[2]); t != "" {
			o.valueType = t
		}
		if len(o.names) == 0 {
			o.names = []string{"--" + strings.ReplaceAll(m[1], "_", "-")}
		}
	}
	o.takesValue = o.valueType != "bool"
	return o, len(o.names) > 0
}

// abslOption reads flags.DEFINE_<kind>("name", default, "help").
func abslOption(s stmt, open int, kind string) (option, bool) {
	args := callArgs(s, open)
	if len(args) == 0 {
		return option{}, false
	}
	name, ok := pyLiteral(args[0])
	if !ok || name == "" {
		return option{}, false
	}
	o := option{lib: "absl", line: s.Line, names: []string{"--" + name}, dest: name, takesValue: true}
	switch kind {
	case "bool", "boolean":
		o.takesValue, o.valueType = false, "bool"
	case "integer":
		o.valueType = "int"
	case "float":
		o.valueType = "float"
	}
	for i, arg := range args[1:] {
		if k, v, kw := kwarg(arg); kw && k == "help" {
			o.help, _ = pyLiteral(v)
		} else if !kw && i == 1 {
			o.help, _ = pyLiteral(arg)
		}
	}
	return o, true
}

// pyType reduces a type= expression to int, float, bool or str.
func pyType(v string) string {
	v = strings.ToLower(strings.TrimSpace(v))
	switch {
	case v == "int" || strings.HasSuffix(v, "int"):
		return "int"
	case v == "float":
		return "float"
	case strings.Contains(v, "bool"):
		return "bool"
	case v == "str" || strings.Contains(v, "path"):
		return "str"
	}
	return ""
}

// destName is the attribute the option sets: dest, or the long name with
// dashes turned into underscores, as argparse does.
func (o option) destName() string {
	if o.dest != "" {
		return o.dest
	}
	return strings.ReplaceAll(strings.TrimLeft(o.display(), "-"), "-", "_")
}

// display is the name to pass: the first long name, else the first name.
func (o option) display() string {
	for _, n := range o.names {
		if strings.HasPrefix(n, "--") {
			return n
		}
	}
	if len(o.names) > 0 {
		return o.names[0]
	}
	return ""
}

var (
	casePatternRe = gate(regexp.MustCompile(`^\(?\s*((?:-{1,2}[\w.-]+(?:=\*)?\s*\|\s*)*-{1,2}[\w.-]+(?:=\*)?)\s*\)`), ")")
	testFlagRe    = gate(regexp.MustCompile(`\[\[?.*(?:==|=)\s*["']?(--[\w-]+)["']?`), "--")
	getoptsCaseRe = gate(regexp.MustCompile(`^([A-Za-z])\)\s*([A-Za-z_]\w*)=`), ")")
)

// shellOptions collects --flags a shell script parses with case or test.
func (a *analysis) shellOptions() {
	for i, s := range a.stmts {
		next := ""
		if i+1 < len(a.stmts) {
			next = a.stmts[i+1].Code
		}
		if m := casePatternRe.FindStringSubmatch(s.Code); m != nil {
			o := option{lib: "shell case", line: s.Line}
			for _, n := range strings.Split(m[1], "|") {
				n = strings.TrimSpace(n)
				if strings.HasSuffix(n, "=*") {
					n, o.eqForm, o.takesValue = strings.TrimSuffix(n, "=*"), true, true
				}
				o.names = append(o.names, n)
			}
			body := s.Code[len(m[0]):]
			if strings.TrimSpace(body) == "" {
				body = next // the branch body starts on the next line
			}
			if strings.Contains(body, "$2") || strings.Contains(body, "shift 2") {
				o.takesValue = true
			}
			a.options = append(a.options, o)
			continue
		}
		if m := getoptsCaseRe.FindStringSubmatch(s.Code); m != nil {
			a.options = append(a.options, option{lib: "getopts", line: s.Line, names: []string{"-" + m[1]},
				dest: m[2], takesValue: strings.Contains(s.Code, "OPTARG")})
			continue
		}
		if m := testFlagRe.FindStringSubmatch(s.Code); m != nil {
			a.options = append(a.options, option{lib: "shell test", line: s.Line, names: []string{m[1]}})
		}
	}
}
