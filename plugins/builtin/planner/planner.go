// Package planner is runbox's default planner plugin. Plan reads a command
// and, when the host found one, the script it runs, and answers "is it safe
// to run, and how should it run?": risks, a sandbox/image/limits
// recommendation with a reason for each value, a smoke command built from a
// flag the script really defines, and the frameworks it uses.
//
// It is pure: no I/O, no clock, no randomness, so the same input always gives
// the same plan. wasm/ wraps it as a wasip1 plugin.
package planner

import (
	"path"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Manifest describes the plugin to the host.
var Manifest = sdk.Manifest{
	Name:        "runbox-planner",
	Version:     "0.1.0",
	ABI:         sdk.ABIVersion,
	Kinds:       []sdk.Kind{sdk.KindPlanner},
	Description: "default planner: risks, sandbox/image/limits, smoke flag, frameworks",
	Frameworks:  []string{"pytorch", "tensorflow", "jax", "mlx", "transformers", "lightning"},
}

// maxScriptBytes bounds the work on a huge script; the rest is not read.
const maxScriptBytes = 1 << 20

// language of the script text.
const (
	langNone   = ""
	langPython = "python"
	langShell  = "shell"
)

// analysis is the state of one Plan call.
type analysis struct {
	in         sdk.PlanInput
	lang       string
	scriptName string // for evidence: "train.py"
	stmts      []stmt

	frameworks map[string]string // name -> evidence
	risks      []sdk.Risk
	riskSeen   map[string]int // code+evidence -> index; code -> count
	network    []string       // evidence of network use
	installs   []string       // evidence of runtime package installs
	cuda       []string       // evidence the script wants a CUDA device
	metal      []string       // evidence the script wants Apple Metal/MPS
	training   []string       // evidence it trains something
	options    []option       // command-line options the script defines
	notes      []string
	pyVersion  string          // from a pythonX.Y interpreter in the command
	allow      []sdk.AllowHost // hosts the command needs (allownet.go)
	allowSeen  map[string]bool
}

// Plan answers "is it safe to run, and how should it run?" for in.
func Plan(in sdk.PlanInput) sdk.PlanOutput {
	a := &analysis{in: in, frameworks: map[string]string{}, riskSeen: map[string]int{}}
	a.load()
	a.scanCommand()
	a.scanScript()
	smoke := a.findSmoke()
	rec := a.recommend()
	return sdk.PlanOutput{
		Risks:          sortRisks(a.risks),
		Recommendation: rec,
		Smoke:          smoke,
		Frameworks:     a.frameworkList(),
		Notes:          a.notes,
		AllowNet:       a.allowNet(), // allownet.go
	}
}

// load decides the script language and splits it into statements.
func (a *analysis) load() {
	text := a.in.ScriptText
	if len(text) > maxScriptBytes {
		text = text[:maxScriptBytes]
		a.note("the script is larger than 1 MiB; only the first 1 MiB was read")
	}
	a.scriptName = "script"
	if a.in.ScriptPath != "" {
		a.scriptName = path.Base(a.in.ScriptPath)
	}
	a.lang = scriptLanguage(a.in.ScriptPath, text, a.in.Command)
	switch {
	case text == "" && a.in.ScriptPath != "":
		a.note("the script text was not provided, so only the command was checked")
	case a.lang == langPython:
		a.stmts = pyStatements(text)
	case a.lang == langShell:
		a.stmts = shellStatements(text)
	}
}

// scriptLanguage guesses the script's language from its extension, its
// shebang, then the interpreter in the command.
func scriptLanguage(scriptPath, text string, cmd []string) string {
	if text == "" {
		return langNone
	}
	switch path.Ext(scriptPath) {
	case ".py", ".pyw":
		return langPython
	case ".sh", ".bash", ".zsh", ".ksh":
		return langShell
	}
	if strings.HasPrefix(text, "#!") {
		first, _, _ := strings.Cut(text, "\n")
		if strings.Contains(first, "python") {
			return langPython
		}
		if strings.Contains(first, "sh") {
			return langShell
		}
	}
	for _, w := range cmd {
		b := path.Base(w)
		if isPython(b) {
			return langPython
		}
		if isShell(b) {
			return langShell
		}
	}
	if strings.Contains(text, "import ") || strings.Contains(text, "def ") {
		return langPython
	}
	return langShell
}

func isPython(base string) bool {
	return base == "python" || base == "python3" || base == "pythonw" ||
		strings.HasPrefix(base, "python3.") || base == "ipython"
}

func isShell(base string) bool {
	switch base {
	case "sh", "bash", "zsh", "dash", "ksh":
		return true
	}
	return false
}

// evidence formats where something was seen in the script.
func (a *analysis) evidence(s stmt) string {
	return a.scriptName + ":" + strconv.Itoa(s.Line) + ": " + clip(s.Code, 160)
}

func (a *analysis) note(n string) {
	for _, old := range a.notes {
		if old == n {
			return
		}
	}
	a.notes = append(a.notes, n)
}

// maxRisksPerCode keeps a script with a hundred downloads from drowning the
// one risk that matters.
const maxRisksPerCode = 3

func (a *analysis) addRisk(sev, code, msg, ev string) {
	key := code + "\x00" + ev
	if _, dup := a.riskSeen[key]; dup {
		return
	}
	if a.riskSeen[code] >= maxRisksPerCode {
		return
	}
	a.riskSeen[key] = len(a.risks)
	a.riskSeen[code]++
	a.risks = append(a.risks, sdk.Risk{Severity: sev, Code: code, Message: msg, Evidence: ev})
}

var severityRank = map[string]int{
	sdk.SeverityCritical: 0, sdk.SeverityHigh: 1, sdk.SeverityMedium: 2,
	sdk.SeverityLow: 3, sdk.SeverityInfo: 4,
}

// sortRisks orders risks most serious first, keeping discovery order within
// a severity (a stable insertion sort: the lists are short).
func sortRisks(rs []sdk.Risk) []sdk.Risk {
	for i := 1; i < len(rs); i++ {
		for j := i; j > 0 && severityRank[rs[j].Severity] < severityRank[rs[j-1].Severity]; j-- {
			rs[j], rs[j-1] = rs[j-1], rs[j]
		}
	}
	return rs
}

// maxRisk returns the highest severity rank seen (0 = critical), or 5.
func (a *analysis) maxRisk() int {
	best := 5
	for _, r := range a.risks {
		if severityRank[r.Severity] < best {
			best = severityRank[r.Severity]
		}
	}
	return best
}
