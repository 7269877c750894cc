// Package classify is runbox's default failure classifier: it reads the exit
// status, the sandbox's facts and the output tails of a failed run and names
// one failure code (DESIGN §4) with a message, suggestions and evidence.
//
// It is a pure function of its input. Output is normalised once (escape
// codes, markdown quoting, timestamps, log levels and rank labels removed),
// walked once to find tracebacks and their chains, and every line that is not
// a traceback frame is matched against each framework's phrases. The
// candidates are then ranked; see pick for the precedence rules.
package classify

import (
	"github.com/runbox/runbox/sdk"
)

// Manifest describes the plugin to the host.
var Manifest = sdk.Manifest{
	Name:        "runbox-classify",
	Version:     "0.1.0",
	ABI:         sdk.ABIVersion,
	Kinds:       []sdk.Kind{sdk.KindClassifier},
	Description: "Default failure classifier: Python, shell, PyTorch, TensorFlow/Keras, JAX/XLA, MLX/Metal, Hugging Face, NCCL and launchers.",
	Frameworks: []string{
		"python", "shell", "pytorch", "tensorflow", "keras", "jax", "mlx",
		"huggingface", "numpy", "nccl", "deepspeed", "accelerate", "ray",
	},
}

// Classify explains why a run failed. It never returns nil.
func Classify(in sdk.ClassifyInput) *sdk.Failure {
	if !in.Smoke {
		return classify(&in)
	}
	in.Smoke = false
	f := classify(&in)
	if f.Code == sdk.CodeCancelled || f.Code == sdk.CodeSandboxError {
		return f // the smoke run did not fail: it was stopped or never ran
	}
	return wrapSmoke(f)
}

func classify(in *sdk.ClassifyInput) *sdk.Failure {
	switch {
	case in.SandboxError != "":
		return sandboxFailure(in)
	case in.Cancelled:
		return cancelled(in)
	}
	sc := scan(in)
	sc.addGeneric()
	switch {
	case in.OOMKilled:
		return sc.oomFact(sc.pick())
	case in.TimedOut:
		return sc.timeout()
	case in.Stalled:
		return sc.stalled()
	}
	sc.addExit()
	c := sc.pick()
	sc.refine(c)
	return nanLossFromProgress(in, sc.failure(c))
}

// Tiers of evidence, strongest first. A candidate in a higher tier always
// wins; inside a tier the score decides.
const (
	tierNone    = 0 // nothing known: NONZERO_EXIT
	tierWeak    = 1 // a warning/info line, or a phrase that is not an error report
	tierGeneric = 2 // an uncaught Python exception with no specific code; wrappers
	tierExit    = 3 // the exit status or signal
	tierText    = 4 // a specific error in the output
)

// cand is one possible explanation found in the output or the exit status.
type cand struct {
	code    string
	conf    float64
	msg     string
	sugg    []string
	retry   bool
	details map[string]string
	soft    bool // a mention, not an error report: weak tier
	// inferred: the code is a guess from a consequence (a bare SIGKILL
	// taken for the OOM killer); it ranks as that consequence.
	inferred bool
	rank     int // 0 = codeRank[code]
	at       int // line index, -1 for the exit status
	tier     int
	ev       []int // more evidence lines
}

// codeRank orders specific codes when several appear: root causes (memory,
// syntax, imports) above their usual consequences (a crashed peer makes the
// other ranks report NCCL errors; a dying process prints "Killed").
var codeRank = map[string]int{
	sdk.CodeCUDAOOM: 92, sdk.CodeMetalOOM: 92, sdk.CodeOOMKilled: 90, sdk.CodeDiskFull: 88,
	sdk.CodeSyntaxError: 86, sdk.CodeIllegalInstruction: 86, sdk.CodeGPUError: 84,
	sdk.CodeModuleNotFound: 84, sdk.CodeArgumentError: 83, sdk.CodeCommandNotFound: 82,
	sdk.CodeShapeMismatch: 80, sdk.CodeFileNotFound: 78, sdk.CodePermissionDenied: 78,
	sdk.CodeNetworkError: 76, sdk.CodeNaNLoss: 74, sdk.CodeScriptError: 70, sdk.CodeSegfault: 68,
	sdk.CodeDistributedError: 62, sdk.CodeAborted: 60, sdk.CodeInterrupted: 58,
	sdk.CodeTimeout: 57, sdk.CodeTerminated: 56, sdk.CodeKilled: 55, sdk.CodePythonException: 40, sdk.CodeNonzeroExit: 1,
}

// consequence codes are usually what other processes report after the real
// failure; they never get the primary-traceback bonus.
func consequence(code string) bool {
	switch code {
	case sdk.CodeDistributedError, sdk.CodeKilled, sdk.CodeTerminated, sdk.CodeAborted:
		return true
	}
	return false
}

func (sc *scanner) add(i int, c cand) {
	c.at = i
	c.tier = tierText
	if c.soft || sc.lines[i].weak {
		c.tier = tierWeak
	} else if t := sc.tbOf[i]; t >= 0 && sc.tbs[t].weak {
		c.tier = tierWeak
	}
	if c.rank == 0 {
		c.rank = codeRank[c.code]
		if c.inferred {
			c.rank = codeRank[sdk.CodeKilled]
		}
	}
	sc.cands = append(sc.cands, c)
}

// primary returns the group of the last traceback that ended the program:
// the last non-weak, non-wrapper traceback with an exception line, and the
// smallest cause depth in it.
func (sc *scanner) primary() (group, minCause int) {
	group = -1
	last := -1
	for k := range sc.tbs {
		t := &sc.tbs[k]
		if t.exc < 0 || t.weak || t.wrapper || t.exc < last {
			continue
		}
		group, last = t.group, t.exc
	}
	minCause = 1 << 30
	for k := range sc.tbs {
		if sc.tbs[k].group == group && sc.tbs[k].cause < minCause {
			minCause = sc.tbs[k].cause
		}
	}
	return group, minCause
}

// pick chooses the explanation. Precedence (DESIGN §4):
//   - runbox's own facts (sandbox error, cancel, timeout, stall, OOM kill) win
//     before any text is read (fromFacts);
//   - specific text beats the exit status, which beats a generic Python
//     exception, which beats warnings and mere mentions;
//   - among specific text, an error inside the traceback that ended the
//     program gets a bonus, and inside a chain ("The above exception was the
//     direct cause", "During handling", DataLoader's "Original Traceback") the
//     root cause gets more; launcher wrappers (ChildFailedError,
//     CalledProcessError) never do, so the child's real error wins;
//   - then the code's rank, then the later line.
func (sc *scanner) pick() *cand {
	group, minCause := sc.primary()
	primarySpecific := false
	for k := range sc.cands {
		c := &sc.cands[k]
		if c.tier == tierText && c.at >= 0 && sc.tbOf[c.at] >= 0 && sc.tbs[sc.tbOf[c.at]].group == group {
			primarySpecific = true
		}
	}
	var best *cand
	bestScore := -1
	for k := range sc.cands {
		c := &sc.cands[k]
		s := sc.score(c, group, minCause, primarySpecific)
		if best == nil || s > bestScore || s == bestScore && sc.later(c, best) {
			best, bestScore = c, s
		}
	}
	if best == nil {
		best = &cand{code: sdk.CodeNonzeroExit, conf: 0.2, at: -1, msg: sc.nonzeroMessage()}
		sc.nonzeroEvidence(best)
		return best
	}
	return sc.sameCode(best)
}

// score ranks a candidate; see pick.
func (sc *scanner) score(c *cand, group, minCause int, primarySpecific bool) int {
	tier, rank := c.tier, c.rank
	if c.tier == tierText && c.at >= 0 {
		t := sc.tbOf[c.at]
		switch {
		case t >= 0 && sc.tbs[t].group == group && !consequence(c.code) && !c.inferred:
			rank += 50 + 40*(sc.tbs[t].cause-minCause)
		case t >= 0 && group >= 0 && sc.tbs[t].group != group && !primarySpecific && !pervasive(c.code):
			// An earlier traceback the program survived (handled and
			// logged) does not explain the generic error that ended it.
			tier, rank = tierGeneric, rank-50
			c.conf = min(c.conf, 0.5)
		case group >= 0 && c.conf > 0.5:
			c.conf -= 0.1
		}
	}
	if c.tier == tierWeak {
		c.conf = min(c.conf, 0.45)
	}
	return tier*1000 + rank
}

// pervasive codes poison what runs after them, so an earlier traceback with
// one of them still explains a later, different error.
func pervasive(code string) bool {
	switch code {
	case sdk.CodeCUDAOOM, sdk.CodeMetalOOM, sdk.CodeOOMKilled, sdk.CodeGPUError, sdk.CodeDiskFull:
		return true
	}
	return false
}

// later breaks ties: the later traceback wins (it is the one that ended the
// program), but inside one exception message the first line is the headline.
func (sc *scanner) later(c, best *cand) bool {
	if c.at >= 0 && best.at >= 0 && sc.tbOf[c.at] >= 0 && sc.tbOf[c.at] == sc.tbOf[best.at] {
		return c.at < best.at
	}
	return c.at > best.at
}

// sameCode: when several candidates in the chosen one's traceback chain name
// the same code, keep the most confident (the root on a tie) and fill its
// details from the others (a DNS error at the root, the repo id in the
// wrapper).
func (sc *scanner) sameCode(best *cand) *cand {
	if best.at < 0 || sc.tbOf[best.at] < 0 {
		return best
	}
	g := sc.tbs[sc.tbOf[best.at]].group
	pick := best
	for k := range sc.cands {
		c := &sc.cands[k]
		if c.code == best.code && c.tier == best.tier && c.at >= 0 && sc.tbOf[c.at] >= 0 && sc.tbs[sc.tbOf[c.at]].group == g && c.conf > pick.conf {
			pick = c
		}
	}
	for k := range sc.cands {
		c := &sc.cands[k]
		if c == pick || c.code != pick.code || c.at < 0 || sc.tbOf[c.at] < 0 || sc.tbs[sc.tbOf[c.at]].group != g {
			continue
		}
		for dk, v := range c.details {
			if _, ok := pick.details[dk]; !ok && v != "" {
				pick.details = setDetail(pick.details, dk, v)
			}
		}
	}
	return pick
}

// failure turns the chosen candidate into the wire type.
func (sc *scanner) failure(c *cand) *sdk.Failure {
	f := &sdk.Failure{
		Code:        c.code,
		Message:     c.msg,
		Suggestions: c.sugg,
		Retryable:   c.retry,
		Confidence:  c.conf,
		Details:     c.details,
	}
	seen := map[int]bool{}
	addEv := func(i int) {
		if i < 0 || i >= len(sc.lines) || seen[i] || sc.lines[i].text == "" || len(f.Evidence) >= 5 {
			return
		}
		seen[i] = true
		f.Evidence = append(f.Evidence, clip(sc.lines[i].text, 300))
	}
	addEv(c.at)
	if c.at >= 0 {
		if t := sc.tbOf[c.at]; t >= 0 {
			addEv(sc.tbs[t].exc)
		}
	}
	for _, i := range c.ev {
		addEv(i)
	}
	if sig := sc.signalName(); sig != "" && f.Details["signal"] == "" && c.at < 0 {
		f.Details = setDetail(f.Details, "signal", sig)
	}
	return f
}

func setDetail(d map[string]string, k, v string) map[string]string {
	if v == "" {
		return d
	}
	if d == nil {
		d = map[string]string{}
	}
	d[k] = v
	return d
}

func wrapSmoke(f *sdk.Failure) *sdk.Failure {
	d := map[string]string{"cause": f.Code}
	for k, v := range f.Details {
		if k != "cause" {
			d[k] = v
		}
	}
	sugg := append([]string(nil), f.Suggestions...)
	sugg = append(sugg, "Fix the cause above and run again: the smoke run checks that the command starts before the full run is spent.")
	return &sdk.Failure{
		Code:        sdk.CodeSmokeFailed,
		Message:     "The smoke run failed (" + f.Code + "), so the full run was not started: " + f.Message,
		Suggestions: sugg,
		Retryable:   f.Retryable,
		Evidence:    f.Evidence,
		Confidence:  f.Confidence,
		Details:     d,
	}
}
