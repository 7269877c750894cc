package record

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/runbox/runbox/internal/printable"
)

// Side is one run as a diff sees it: its record and how it ended.
type Side struct {
	RunID  string
	Record *Record // nil: the run has no record (taken before records, or --no-record)
	// Outcome.
	State       string
	ExitCode    *int
	FailureCode string
	// Metrics are the final values of the run's metrics.
	Metrics map[string]float64
}

// Change is one thing that differs between two runs.
type Change struct {
	// Kind: command, param, env, code, script, package, interpreter,
	// image, host, gpu, limits, sandbox, outcome.
	Kind   string `json:"kind"`
	Name   string `json:"name,omitempty"`
	A      string `json:"a,omitempty"`
	B      string `json:"b,omitempty"`
	Detail string `json:"detail,omitempty"`
	// PatchA and PatchB are a file's uncommitted changes in each run (vs
	// its commit), cut at MaxPatch: the code of the two runs side by side.
	PatchA string `json:"patch_a,omitempty"`
	PatchB string `json:"patch_b,omitempty"`
}

// MaxPatch bounds the patch text a change carries per run.
const MaxPatch = 16 << 10

func cutPatch(p string) string {
	if len(p) <= MaxPatch {
		return p
	}
	return p[:MaxPatch] + fmt.Sprintf("\n[... %d more bytes of this file's patch not shown]\n", len(p)-MaxPatch)
}

// String is the change in one line: "package torch: 2.2.1 → 2.3.0".
func (c Change) String() string {
	what := c.Kind
	if c.Name != "" {
		what += " " + c.Name
	}
	var s string
	switch {
	case c.A == "" && c.B != "":
		s = fmt.Sprintf("%s: added %s", what, c.B)
	case c.A != "" && c.B == "":
		s = fmt.Sprintf("%s: removed (was %s)", what, c.A)
	case c.A != "" || c.B != "":
		s = fmt.Sprintf("%s: %s → %s", what, c.A, c.B)
	default:
		s = what
	}
	if c.Detail != "" {
		s += " (" + c.Detail + ")"
	}
	return s
}

// suspicion orders kinds from most to least likely to break a run that
// used to work: where it ran (another workspace changes everything), what
// it imports and runs, then its code, the machine, its inputs, its limits.
var suspicion = map[string]int{
	"workdir": 5, "package": 10, "interpreter": 11, "image": 12, "script": 20, "code": 21,
	"gpu": 30, "env": 40, "command": 45, "param": 50, "limits": 60, "sandbox": 70,
	"host": 80, "outcome": 90,
}

// Rank sorts changes most suspect first (stable within a kind).
func Rank(cs []Change) {
	sort.SliceStable(cs, func(i, j int) bool { return suspicion[cs[i].Kind] < suspicion[cs[j].Kind] })
}

// Diff lists what differs from a to b, most suspect first; outcome
// changes come last. Two runs without records are compared on what their
// sides carry.
func Diff(a, b Side) []Change {
	var cs []Change
	ra, rb := a.Record, b.Record
	if ra == nil {
		ra = &Record{}
	}
	if rb == nil {
		rb = &Record{}
	}
	if a.Record == nil || b.Record == nil {
		cs = append(cs, Change{Kind: "record", Detail: "one run has no record of what ran: only what both have is compared"})
	}
	if ra.Workdir != "" && rb.Workdir != "" && ra.Workdir != rb.Workdir {
		// Another project with a script of the same name, or the same one
		// moved: every other change below is read with that in mind.
		cs = append(cs, Change{Kind: "workdir", A: ra.Workdir, B: rb.Workdir})
	}
	if !slices.Equal(withoutParams(ra.Command), withoutParams(rb.Command)) {
		cs = append(cs, Change{Kind: "command", A: printable.Command(ra.Command), B: printable.Command(rb.Command)})
	}
	cs = append(cs, mapChanges("param", ra.Params, rb.Params)...)
	cs = append(cs, envChanges(ra, rb)...)
	cs = append(cs, codeChanges(ra, rb)...)
	cs = append(cs, interpChanges(ra.Interpreter, rb.Interpreter)...)
	cs = append(cs, imageChanges(ra.Image, rb.Image)...)
	cs = append(cs, hostChanges(ra.Host, rb.Host)...)
	cs = append(cs, limitChanges(ra, rb)...)
	cs = append(cs, outcomeChanges(a, b)...)
	Rank(cs)
	return cs
}

// withoutParams is a command with its parameter values taken out, so
// that a changed --lr is one param change, not also a command change.
func withoutParams(cmd []string) []string {
	ps := Params(cmd)
	var out []string
	skip := false
	for _, a := range cmd {
		if skip {
			skip = false
			continue
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			if k, _, ok := strings.Cut(name, "="); ok {
				out = append(out, "--"+k)
				continue
			}
			if v, ok := ps[name]; ok && v != "true" {
				skip = true
			}
			out = append(out, a)
			continue
		}
		if k, _, ok := strings.Cut(a, "="); ok {
			if _, isParam := ps[k]; isParam {
				out = append(out, k+"=")
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

func mapChanges(kind string, a, b map[string]string) []Change {
	var cs []Change
	for _, k := range unionKeys(a, b) {
		va, oka := a[k]
		vb, okb := b[k]
		if oka && okb && va == vb {
			continue
		}
		c := Change{Kind: kind, Name: k, A: va, B: vb}
		if oka && va == "" {
			c.A = `""`
		}
		if okb && vb == "" {
			c.B = `""`
		}
		cs = append(cs, c)
	}
	return cs
}

func unionKeys(ms ...map[string]string) []string {
	set := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			set[k] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// secretMark is the store's stand-in for a secret value.
const secretMark = "<redacted>"

func envChanges(a, b *Record) []Change {
	cs := mapChanges("env", envMap(a.Env), envMap(b.Env))
	for i := range cs {
		if cs[i].A == secretMark || cs[i].B == secretMark {
			if cs[i].A != "" && cs[i].B != "" {
				cs[i].A, cs[i].B, cs[i].Detail = "", "", "a secret: its value is not compared"
			}
		}
	}
	// Secret values never compare (both redacted), so a secret in both is
	// no change; one only in one run is (added/removed above).
	out := cs[:0]
	for _, c := range cs {
		if c.Detail == "a secret: its value is not compared" {
			continue
		}
		out = append(out, c)
	}
	na, nb := setOf(a.EnvNames), setOf(b.EnvNames)
	for _, k := range unionKeys(na, nb) {
		switch {
		case na[k] != "" && nb[k] == "":
			out = append(out, Change{Kind: "env", Name: k, Detail: "inherited by " + "the first run only"})
		case na[k] == "" && nb[k] != "":
			out = append(out, Change{Kind: "env", Name: k, Detail: "inherited by the second run only"})
		}
	}
	return out
}

func setOf(s []string) map[string]string {
	m := map[string]string{}
	for _, k := range s {
		m[k] = "1"
	}
	return m
}

func codeChanges(a, b *Record) []Change {
	var cs []Change
	sa, sb := a.Script, b.Script
	if sa != nil && sb != nil && sa.SHA256 != "" && sb.SHA256 != "" && sa.SHA256 != sb.SHA256 {
		cs = append(cs, Change{Kind: "script", Name: sb.Path, A: short(sa.SHA256), B: short(sb.SHA256), Detail: "its content differs"})
	}
	ca, cb := a.Code, b.Code
	switch {
	case ca == nil && cb == nil:
		return cs
	case ca == nil || cb == nil:
		cs = append(cs, Change{Kind: "code", Name: "git", A: codeLabel(ca), B: codeLabel(cb)})
		return cs
	}
	if ca.Commit != cb.Commit {
		cs = append(cs, Change{Kind: "code", Name: "commit", A: short(ca.Commit), B: short(cb.Commit)})
	}
	if ca.Branch != cb.Branch {
		cs = append(cs, Change{Kind: "code", Name: "branch", A: ca.Branch, B: cb.Branch})
	}
	if ca.Remote != cb.Remote {
		cs = append(cs, Change{Kind: "code", Name: "remote", A: ca.Remote, B: cb.Remote})
	}
	pa, pb := filePatches(ca.Diff), filePatches(cb.Diff)
	for _, f := range unionKeys(pa, pb) {
		if pa[f] == pb[f] {
			continue
		}
		c := Change{Kind: "code", Name: f}
		switch {
		case pa[f] == "":
			c.Detail = "edited (uncommitted) in the second run only"
		case pb[f] == "":
			c.Detail = "edited (uncommitted) in the first run only"
		default:
			c.Detail = "its uncommitted edits differ"
		}
		c.A, c.B = churn(pa[f]), churn(pb[f])
		c.PatchA, c.PatchB = cutPatch(pa[f]), cutPatch(pb[f])
		cs = append(cs, c)
	}
	ua, ub := setOf(ca.Untracked), setOf(cb.Untracked)
	for _, f := range unionKeys(ua, ub) {
		if ua[f] == "" {
			cs = append(cs, Change{Kind: "code", Name: f, Detail: "untracked file new in the second run"})
		} else if ub[f] == "" {
			cs = append(cs, Change{Kind: "code", Name: f, Detail: "untracked file gone in the second run"})
		}
	}
	return cs
}

func codeLabel(c *Code) string {
	if c == nil {
		return "not a git repository"
	}
	return "git " + short(c.Commit)
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// filePatches splits a git diff into its files' patches.
func filePatches(diff string) map[string]string {
	out := map[string]string{}
	var name string
	var cur strings.Builder
	flush := func() {
		if name != "" {
			out[name] = cur.String()
		}
		cur.Reset()
	}
	for _, l := range strings.SplitAfter(diff, "\n") {
		if strings.HasPrefix(l, "diff --git ") {
			flush()
			f := strings.Fields(strings.TrimSpace(l))
			name = strings.TrimPrefix(f[len(f)-1], "b/")
			continue
		}
		if strings.HasPrefix(l, "index ") {
			continue // the blob ids differ with any edit; the lines say it
		}
		cur.WriteString(l)
	}
	flush()
	return out
}

// churn sums up a file's patch: "+3 -1 lines".
func churn(patch string) string {
	if patch == "" {
		return ""
	}
	var add, del int
	for _, l := range strings.Split(patch, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			add++
		case strings.HasPrefix(l, "-"):
			del++
		}
	}
	return fmt.Sprintf("+%d -%d lines", add, del)
}

// Nothing is what "since it last worked" says when no recorded thing differs.
const Nothing = "nothing recorded differs from the run that worked (same code, packages, parameters, environment, image and host): the cause is outside what runbox records (data, network, chance)"

// SinceWorked lists what changed from the last success to a failure,
// most suspect first, outcome left out (it is the question, not a cause).
func SinceWorked(worked, failed Side) []Change {
	var out []Change
	for _, c := range Diff(worked, failed) {
		if c.Kind != "outcome" {
			out = append(out, c)
		}
	}
	return out
}
