// Package rules reads a rules file — progress formats and failure
// signatures written as data, in JSON — and applies it. A plugin bundle
// may carry rules files (NAME.rules.json) next to or instead of WebAssembly
// modules: a team adds a framework's progress line or a lab's failure
// signature in a few lines, with no toolchain, tested with the same
// fixtures runner, signed and shared like any bundle (docs/PLUGINS.md,
// "Add a format in five lines"). The host interprets them (package
// plugins); logic a table cannot say stays in a WebAssembly plugin.
//
// The schema is the one the built-in classifier's signatures use
// (plugins/builtin/classify/signatures.go):
//
//	{
//	  "name": "lab-rules",
//	  "progress": [{"name": "mytool", "literal": "MYTOOL",
//	                "pattern": "MYTOOL step (?P<step>\\d+)/(?P<total>\\d+) loss=(?P<loss>\\S+)"}],
//	  "failures": [{"name": "quota", "code": "DISK_FULL", "phrases": ["lab quota exhausted"],
//	                "message": "The lab's storage quota is used up", "suggestions": ["Clean /lab/scratch"]}]
//	}
//
// A progress pattern's named groups say what each capture means: step,
// total, epoch, epoch_total, percent; any other name is a metric. A line
// must hold the format's literal (3 bytes or more) before its pattern is
// tried, so that ordinary lines cost one substring search.
//
// Instead of a pattern, a format may give templates ("match", "optional"),
// the form the built-in progress plugin's own formats are written in and
// read by the same reader (package decl): literal text with holes whose
// names say what they are and whose kinds say how they are written and
// converted:
//
//	{"name": "shards", "literal": "processed shard",
//	 "match": ["processed shard {counter}"]}
//	{"name": "nb", "literal": "Epoch", "rate_unit": "it/s",
//	 "match": ["^[ {step} / {total}", "Epoch {epoch:elapsed}/{epoch_total}"],
//	 "optional": ["< {eta:clock}", "{rate} it/s"]}
//
// A {counter} is a count with no total: the line is at that step once it
// rises from the format's previous line (Reader keeps it, per run).
package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/runbox/runbox/plugins/builtin/decl"
	"github.com/runbox/runbox/sdk"
)

// File is one rules file.
type File struct {
	Name     string    `json:"name"`
	Progress []Format  `json:"progress,omitempty"`
	Failures []Failure `json:"failures,omitempty"`
}

// Format is a progress line: a literal, and a pattern whose named groups
// say what each captured field means.
type Format struct {
	Name    string `json:"name"`
	Literal string `json:"literal"`
	Pattern string `json:"pattern"`
	Phase   string `json:"phase,omitempty"` // "train" when empty
	// Finished is a literal that marks the end of the whole job.
	Finished string `json:"finished,omitempty"`
	// Match and Optional are templates (package decl), instead of
	// Pattern; RateUnit is a {rate} hole's unit.
	Match    []string `json:"match,omitempty"`
	Optional []string `json:"optional,omitempty"`
	RateUnit string   `json:"rate_unit,omitempty"`
	re       *regexp.Regexp
	entry    *decl.Entry
	line     int
}

// Failure is a failure signature: a line (lowercased) that holds one of
// Phrases, one phrase of each With group and none of Without is Code.
type Failure struct {
	Name        string     `json:"name"`
	Code        string     `json:"code"`
	Phrases     []string   `json:"phrases"`
	With        [][]string `json:"with,omitempty"`
	Without     []string   `json:"without,omitempty"`
	Message     string     `json:"message"`
	Suggestions []string   `json:"suggestions,omitempty"`
	Confidence  float64    `json:"confidence,omitempty"` // 0.8 when 0
	line        int
}

// Parse reads and checks a rules file. Its errors name the line: "line 7:
// progress \"mytool\": pattern: missing closing )".
func Parse(data []byte) (*File, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("line %d: %w", errLine(data, dec, err), err)
	}
	if dec.More() {
		return nil, fmt.Errorf("line %d: more than one JSON value", lineAt(data, int(dec.InputOffset())))
	}
	var errs []error
	bad := func(line int, what, name, msg string) {
		errs = append(errs, fmt.Errorf("line %d: %s %q: %s", line, what, name, msg))
	}
	if f.Name == "" {
		errs = append(errs, errors.New("line 1: the file needs a \"name\""))
	}
	if len(f.Progress)+len(f.Failures) == 0 {
		errs = append(errs, errors.New("line 1: no progress formats and no failure signatures"))
	}
	seen := map[string]bool{}
	for i := range f.Progress {
		p := &f.Progress[i]
		p.line = entryLine(data, "progress", i)
		if p.Name == "" || seen["p:"+p.Name] {
			bad(p.line, "progress", p.Name, "needs a name of its own")
		}
		seen["p:"+p.Name] = true
		if len(p.Literal) < 3 {
			bad(p.line, "progress", p.Name, "literal must be 3 bytes or more (the host looks for it in every line)")
		}
		if len(p.Match) > 0 || len(p.Optional) > 0 {
			if p.Pattern != "" {
				bad(p.line, "progress", p.Name, "give a \"pattern\" or \"match\" templates, not both")
				continue
			}
			e := &decl.Entry{Name: p.Name, Phase: p.Phase, Match: p.Match, Optional: p.Optional, RateUnit: p.RateUnit}
			if e.Phase == "" {
				e.Phase = "train"
			}
			if err := e.Compile(); err != nil {
				bad(p.line, "progress", p.Name, strings.ReplaceAll(err.Error(), "\n", "; "))
				continue
			}
			if !strings.Contains(strings.Join(p.Match, "\n"), p.Literal) {
				bad(p.line, "progress", p.Name, "no \"match\" template contains the literal: the host would never send it a line it matches")
			}
			p.entry = e
			continue
		}
		if p.RateUnit != "" {
			bad(p.line, "progress", p.Name, "\"rate_unit\" goes with \"match\" templates")
		}
		re, err := regexp.Compile(p.Pattern)
		if err != nil {
			bad(p.line, "progress", p.Name, "pattern: "+err.Error())
			continue
		}
		p.re = re
		named := 0
		for _, n := range re.SubexpNames()[1:] {
			if n != "" {
				named++
			}
		}
		if named == 0 {
			bad(p.line, "progress", p.Name, "pattern has no named group ((?P<step>\\d+), (?P<loss>\\S+), ...): it would say nothing")
		}
		if !strings.Contains(p.Pattern, regexp.QuoteMeta(p.Literal)) && !strings.Contains(p.Pattern, p.Literal) {
			bad(p.line, "progress", p.Name, "pattern does not contain the literal: the host would never send it a line it matches")
		}
	}
	for i := range f.Failures {
		s := &f.Failures[i]
		s.line = entryLine(data, "failures", i)
		if s.Name == "" || seen["f:"+s.Name] {
			bad(s.line, "failure", s.Name, "needs a name of its own")
		}
		seen["f:"+s.Name] = true
		if !sdk.ValidCode(s.Code) {
			bad(s.line, "failure", s.Name, fmt.Sprintf("code %q is not one of %s", s.Code, strings.Join(sdk.Codes, ", ")))
		}
		if len(s.Phrases) == 0 || s.Message == "" {
			bad(s.line, "failure", s.Name, "needs phrases and a message")
		}
		for k, ph := range s.Phrases {
			if len(ph) < 3 {
				bad(s.line, "failure", s.Name, fmt.Sprintf("phrase %q is shorter than 3 bytes", ph))
			}
			s.Phrases[k] = strings.ToLower(ph)
		}
		for k, g := range s.With {
			if len(g) == 0 {
				bad(s.line, "failure", s.Name, "an empty \"with\" group never matches")
			}
			for j := range g {
				s.With[k][j] = strings.ToLower(g[j])
			}
		}
		for k := range s.Without {
			s.Without[k] = strings.ToLower(s.Without[k])
		}
		if s.Confidence < 0 || s.Confidence > 1 {
			bad(s.line, "failure", s.Name, "confidence must be in (0, 1]")
		}
		if s.Confidence == 0 {
			s.Confidence = 0.8
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return &f, nil
}

// Literals are the progress formats' literals, for the host's prefilter.
func (f *File) Literals() []string {
	var out []string
	for _, p := range f.Progress {
		out = append(out, p.Literal)
		if p.Finished != "" && len(p.Finished) >= 3 {
			out = append(out, p.Finished)
		}
	}
	return out
}

// Line reads one output line: the update its first matching format gives.
// A {counter} says nothing here (it needs the lines before: Reader).
func (f *File) Line(line string) (sdk.Progress, bool) {
	return f.read(line, nil)
}

// Reader reads one run's lines in order by f, keeping the {counter}
// holes' last values (one Reader per run).
type Reader struct {
	f    *File
	last map[string]int64 // a counter format's last value
}

// NewReader returns a Reader for one run.
func (f *File) NewReader() *Reader { return &Reader{f: f} }

// Line is File.Line with the run's counters.
func (r *Reader) Line(line string) (sdk.Progress, bool) {
	if r.last == nil {
		r.last = map[string]int64{}
	}
	return r.f.read(line, r.last)
}

func (f *File) read(line string, last map[string]int64) (sdk.Progress, bool) {
	for i := range f.Progress {
		p := &f.Progress[i]
		if p.Finished != "" && strings.Contains(line, p.Finished) {
			return sdk.Progress{Percentage: 100, Source: p.Name}, true
		}
		if !strings.Contains(line, p.Literal) {
			continue
		}
		if p.entry != nil {
			var ms sdk.Metrics
			u, c, ok := p.entry.Read(line, func(k string, v float64) {
				if ms == nil {
					ms = sdk.Metrics{}
				}
				ms[k] = v
			})
			if !ok {
				continue
			}
			u.Metrics = ms
			if c.Entry != "" {
				if last == nil {
					if len(ms) == 0 {
						continue // a lone counter says nothing
					}
				} else {
					prev, seen := last[c.Entry]
					last[c.Entry] = c.Value
					if step, rose := decl.Rise(prev, c.Value); rose && seen {
						u.Step = step
					} else if len(ms) == 0 {
						continue
					}
				}
			}
			return u, true
		}
		m := p.re.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		u := sdk.Progress{Phase: p.Phase, Source: p.Name}
		if u.Phase == "" {
			u.Phase = "train"
		}
		for k, name := range p.re.SubexpNames() {
			if k == 0 || name == "" || m[k] == "" {
				continue
			}
			v, err := strconv.ParseFloat(strings.TrimRight(m[k], ",;%"), 64)
			if err != nil {
				continue
			}
			switch name {
			case "step":
				u.Step = int64(v)
			case "total":
				u.Total = int64(v)
			case "epoch":
				u.Epoch = int64(v)
			case "epoch_total":
				u.EpochTotal = int64(v)
			case "percent":
				u.Percentage = v
			default:
				if u.Metrics == nil {
					u.Metrics = sdk.Metrics{}
				}
				u.Metrics[name] = v
			}
		}
		if u.Percentage == 0 && u.Total > 0 && u.Step <= u.Total {
			u.Percentage = 100 * float64(u.Step) / float64(u.Total)
		}
		if math.IsNaN(u.Percentage) || u.Percentage < 0 || u.Percentage > 100 {
			u.Percentage = 0
		}
		return u, true
	}
	return sdk.Progress{}, false
}

// Classify explains a failed run by the file's signatures: the last line
// of the output that one matches, or nil.
func (f *File) Classify(in sdk.ClassifyInput) *sdk.Failure {
	if len(f.Failures) == 0 {
		return nil
	}
	text := in.StdoutTail + "\n" + in.StderrTail
	var best *sdk.Failure
	for _, line := range strings.Split(text, "\n") {
		lc := strings.ToLower(line)
		for i := range f.Failures {
			s := &f.Failures[i]
			if !s.matches(lc) {
				continue
			}
			best = &sdk.Failure{
				Code: s.Code, Message: s.Message + ": " + clip(strings.TrimSpace(line), 200),
				Suggestions: s.Suggestions, Confidence: s.Confidence,
				Evidence: []string{clip(strings.TrimSpace(line), 300)},
				Details:  map[string]string{"rule": s.Name},
			}
			break
		}
	}
	return best
}

func (s *Failure) matches(lc string) bool {
	if !hasAny(lc, s.Phrases) || hasAny(lc, s.Without) {
		return false
	}
	for _, g := range s.With {
		if !hasAny(lc, g) {
			return false
		}
	}
	return true
}

func hasAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// errLine is the line a decoding error is at.
func errLine(data []byte, dec *json.Decoder, err error) int {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return lineAt(data, int(se.Offset))
	case errors.As(err, &te):
		return lineAt(data, int(te.Offset))
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		if k := bytes.Index(data, []byte(f)); k >= 0 { // f is quoted as in the file
			return lineAt(data, k)
		}
	}
	return lineAt(data, int(dec.InputOffset()))
}

func lineAt(data []byte, off int) int {
	off = min(max(off, 0), len(data))
	return 1 + bytes.Count(data[:off], []byte{'\n'})
}

// entryLine is the line where the i-th object of the array under key
// starts (1 when it cannot be found).
func entryLine(data []byte, key string, i int) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth := 0
	inKey := false
	for {
		tok, err := dec.Token()
		if err != nil {
			return 1
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				depth++
				if inKey && t == '[' && depth == 2 {
					for n := 0; dec.More(); n++ {
						off := int(dec.InputOffset())
						if n == i {
							// the offset is before the element's separator
							rest := data[off:]
							k := bytes.IndexByte(rest, '{')
							if k < 0 {
								return lineAt(data, off)
							}
							return lineAt(data, off+k)
						}
						var skip json.RawMessage
						if dec.Decode(&skip) != nil {
							return 1
						}
					}
					return 1
				}
			case '}', ']':
				depth--
			}
			inKey = false
		case string:
			inKey = depth == 1 && t == key
		default:
			inKey = false
		}
	}
}
