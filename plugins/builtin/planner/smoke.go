package planner

import (
	"path"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// What a smoke option does, which decides the value to pass.
const (
	semSwitch  = iota // --smoke, --dry-run: on/off
	semFastDev        // Lightning fast_dev_run: a switch or a batch count
	semSteps          // --max-steps N
	semSamples        // --limit N, --max-samples N
)

// smokeName is one family of option names, by how sure we are that it
// makes a cheap run: an explicit smoke/dry-run flag beats a generic one.
type smokeName struct {
	keys  []string // normalized: lower case, no dashes or underscores
	score int
	sem   int
}

var smokeNames = []smokeName{
	{[]string{"smoke", "smoketest", "smokerun", "smokemode", "runsmoke", "runsmoketest"}, 100, semSwitch},
	{[]string{"dryrun", "dry"}, 95, semSwitch},
	{[]string{"fastdevrun", "trainer.fastdevrun"}, 90, semFastDev},
	{[]string{"sanitycheck", "sanity", "testrun", "quicktest", "quickcheck", "quickrun", "checkonly", "validateonly", "smoketesting"}, 85, semSwitch},
	{[]string{"validate"}, 60, semSwitch},
	{[]string{"quick", "fast", "tiny", "mini", "minimal", "toy", "short"}, 55, semSwitch},
	{[]string{"maxsteps", "maxstep", "maxiters", "maxiter", "maxiterations", "iters", "numsteps", "trainsteps",
		"totalsteps", "maxtrainsteps", "numiterations", "numtrainsteps", "steps"}, 50, semSteps},
	{[]string{"limit", "limitbatches", "limittrainbatches", "maxbatches", "numbatches", "maxtrainsamples", "maxsamples",
		"numsamples", "nsamples", "subset", "subsetsize", "limitsamples", "maxexamples", "numexamples", "debugsamples"}, 45, semSamples},
	{[]string{"debug"}, 35, semSwitch},
}

// smokeThreshold is the least score worth proposing.
const smokeThreshold = 40

// smokeHelpWords in an option's help text confirm it makes a cheap run.
var smokeHelpWords = []string{"smoke", "dry run", "dry-run", "sanity", "quick", "without actually", "don't actually",
	"do not actually", "only check", "few steps", "few batches", "single batch", "one batch", "small subset",
	"tiny", "fast check", "test run", "for testing", "subset", "debug run", "fast_dev_run", "fast dev run"}

// validateDuringTraining words mean --validate evaluates while training,
// which makes the run longer, not shorter.
var validateDuringTraining = []string{"epoch", "during training", "every", "each", "validation set", "checkpoint"}

type candidate struct {
	opt   option
	score int
	value string // "" for a switch
}

var dashRemover = strings.NewReplacer("-", "", "_", "")

func normalize(n string) string {
	n = strings.ToLower(strings.TrimLeft(n, "-"))
	return dashRemover.Replace(n)
}

// rank scores an option as a smoke switch; ok is false when it is not one.
func rank(o option) (candidate, bool) {
	disp := strings.ToLower(o.display())
	if strings.HasPrefix(disp, "--no-") || strings.HasPrefix(disp, "--no_") || strings.HasPrefix(disp, "--skip") {
		return candidate{}, false
	}
	keys := []string{}
	for _, n := range o.names {
		keys = append(keys, normalize(n))
	}
	if o.dest != "" {
		keys = append(keys, normalize(o.dest))
	}
	best := smokeName{}
	for _, sn := range smokeNames {
		for _, k := range keys {
			for _, want := range sn.keys {
				if k == want && sn.score > best.score {
					best = sn
				}
			}
		}
	}
	switch o.wiredTo {
	case "fast_dev_run":
		if best.score < 90 {
			best = smokeName{score: 90, sem: semFastDev}
		}
	case "max_steps":
		if best.score < 50 {
			best = smokeName{score: 50, sem: semSteps}
		}
	case "limit_train_batches", "max_train_samples":
		if best.score < 45 {
			best = smokeName{score: 45, sem: semSamples}
		}
	}
	if best.score == 0 {
		return candidate{}, false
	}
	help := strings.ToLower(o.help)
	// --debug scores below the threshold unless its help confirms a short
	// run: it usually means verbose logging.
	if containsAny(help, smokeHelpWords) {
		best.score += 10
	}
	if best.keys != nil && best.keys[0] == "validate" && containsAny(help, validateDuringTraining) {
		return candidate{}, false
	}
	c := candidate{opt: o, score: best.score}
	switch best.sem {
	case semSwitch:
		if o.takesValue {
			c.value = "1"
			if o.valueType == "bool" {
				c.value = "true"
			}
		}
	case semFastDev:
		if o.takesValue {
			c.value = "1"
		}
	case semSteps, semSamples:
		if !o.takesValue || (o.valueType != "int" && o.valueType != "") {
			return candidate{}, false
		}
		c.value = "2"
		if best.sem == semSamples && !strings.Contains(normalize(o.display()), "batch") {
			c.value = "16"
		}
	}
	return c, c.score >= smokeThreshold
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// findSmoke picks the best smoke option the script really defines and
// builds the command that uses it.
func (a *analysis) findSmoke() *sdk.Smoke {
	cmd := a.in.Command
	var best *candidate
	elsewhere := false // a smoke flag exists, but for another subcommand
	for _, o := range a.options {
		c, ok := rank(o)
		if !ok {
			continue
		}
		if present := a.inCommand(o); present != "" {
			if c.score >= 85 {
				a.note("the command already passes " + present + ", so it is its own smoke run")
				return nil
			}
			continue
		}
		if o.subcommand != "" && indexOf(cmd, o.subcommand) < 0 {
			a.note("no smoke run: " + o.display() + " belongs to the subcommand " + strconv.Quote(o.subcommand) + ", which this command does not run")
			elsewhere = true
			continue
		}
		if best == nil || c.score > best.score {
			cc := c
			best = &cc
		}
	}
	if best == nil {
		if c, ok := knownCLISmoke(cmd); ok {
			best = &c
		}
	}
	if best == nil || len(cmd) == 0 {
		if !elsewhere {
			a.noSmokeNote()
		}
		return nil
	}
	flag := best.opt.display()
	extra := []string{flag}
	if best.value != "" {
		if best.opt.eqForm {
			extra = []string{flag + "=" + best.value}
		} else {
			extra = append(extra, best.value)
		}
	}
	return &sdk.Smoke{Command: appendArgs(cmd, extra), Flag: flag, Reason: smokeReason(*best)}
}

// inCommand returns the option's name as the command already passes it.
func (a *analysis) inCommand(o option) string {
	for _, w := range a.in.Command {
		for _, n := range o.names {
			if w == n || strings.HasPrefix(w, n+"=") || (len(a.in.Command) <= 3 && strings.Contains(" "+w+" ", " "+n+" ")) {
				return n
			}
		}
	}
	return ""
}

func smokeReason(c candidate) string {
	o := c.opt
	var b strings.Builder
	switch o.lib {
	case "mlx_lm.lora", "mlx_lm.generate":
		b.WriteString("no script to read; " + o.lib + " accepts " + o.display() + " (" + o.help + ")")
		o.help = ""
	case "LightningCLI", "Trainer.add_argparse_args", "HfArgumentParser(TrainingArguments)":
		b.WriteString(o.lib + " exposes " + o.display())
		if o.line > 0 {
			b.WriteString(" (line " + strconv.Itoa(o.line) + ")")
		}
	default:
		b.WriteString(o.lib + " flag " + o.display() + " defined at line " + strconv.Itoa(o.line))
	}
	if o.help != "" {
		b.WriteString(" (help: " + strconv.Quote(clip(o.help, 100)) + ")")
	}
	if o.subcommand != "" {
		b.WriteString(", subcommand " + strconv.Quote(o.subcommand))
	}
	if o.wiredTo != "" {
		b.WriteString(", passed to the trainer as " + o.wiredTo)
	}
	if c.value != "" {
		b.WriteString("; the smoke run passes " + o.display() + " " + c.value)
	}
	return b.String()
}

// knownCLISmoke covers commands whose options are known without a script.
func knownCLISmoke(cmd []string) (candidate, bool) {
	for i, w := range cmd {
		mod := path.Base(w)
		if i > 0 && cmd[i-1] == "-m" {
			mod = w
		}
		switch mod {
		case "mlx_lm.lora":
			return candidate{opt: option{names: []string{"--iters"}, lib: "mlx_lm.lora", help: "training iterations"}, score: 60, value: "2"}, true
		case "mlx_lm.generate":
			return candidate{opt: option{names: []string{"--max-tokens"}, lib: "mlx_lm.generate", help: "tokens to generate"}, score: 60, value: "8"}, true
		}
	}
	return candidate{}, false
}

// appendArgs adds the smoke arguments to the command: inside the string of
// `sh -c "..."`, otherwise at the end.
func appendArgs(cmd, extra []string) []string {
	out := append([]string(nil), cmd...)
	if n := len(out); n >= 3 && isShell(path.Base(out[0])) && out[n-2] == "-c" {
		out[n-1] += " " + shellJoin(extra)
		return out
	}
	return append(out, extra...)
}

func (a *analysis) noSmokeNote() {
	switch {
	case a.in.ScriptText == "" && len(a.options) == 0:
		a.note("no smoke run: no script text to read a smoke flag from")
	case len(a.options) == 0:
		a.note("no smoke run: the script defines no command-line options (looked for argparse, click, typer, absl, shell case)")
	default:
		seen := []string{}
		for _, o := range a.options {
			if d := o.display(); len(seen) < 8 && indexOf(seen, d) < 0 {
				seen = append(seen, d)
			}
		}
		a.note("no smoke run: none of the script's options (" + strings.Join(seen, ", ") +
			") is a smoke switch such as --smoke, --dry-run, --fast-dev-run or --max-steps")
	}
}
