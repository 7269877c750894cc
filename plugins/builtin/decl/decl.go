// Package decl reads progress lines by declarative entries: templates of
// literal text with named holes, whose names say what each captured value
// means (step, total, epoch, percent, a metric, ...) and whose kinds say
// how a value is written and converted (a grouped count "1,851", a clock
// "02:15" in seconds, an epoch printed as epochs elapsed "1.35/3").
//
// One reader (Entry.Read) serves the built-in progress plugin's format
// table (plugins/builtin/progress, formats.go: the entries with no code of
// their own) and a bundle's rules file (plugins/rules: a progress format's
// "match"), so a format written in a team's rules file is read the way a
// built-in one is. The package has no regular expressions and allocates
// nothing on a line it declines: the built-in plugin runs it inside
// WebAssembly on every line its literals let through.
//
// A template:
//
//	Total optimization steps = {total:count}$
//	[ {step}/{total} ...        (a leading "^" anchors it at the start)
//	Epoch {epoch:elapsed}/{epoch_total}]$
//	< {eta:clock}
//	{rate} it/s                 (a template may start with a hole)
//
// A blank in a template matches any run of blanks (none, beside
// punctuation; one at least between two word characters, a hole counting
// as one); a template that starts with a letter matches at the start of a
// word; "$" at its end is the end of the line (trailing blanks allowed).
//
// Hole names: step, total, epoch, epoch_total, percent, eta (seconds),
// rate, counter (a count with no total that rises from line to line of the
// same entry: the host keeps it, see sdk.ParseInput.State), "_" (read and
// dropped); any other name is a metric. Kinds: int (the default for the
// counts), count (an integer with thousands commas), num (the default for
// the others: a decimal, an exponent, nan and inf), clock ([[d:]h:]mm:ss
// in seconds), elapsed (an epoch printed as epochs done, 1.35 of 3: the
// run is in epoch 2; epoch only).
package decl

import (
	"errors"
	"math"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Entry is one progress line shape.
type Entry struct {
	Name string `json:"name"`
	// Source is the updates' Source (which format matched); Name when
	// empty.
	Source string `json:"source,omitempty"`
	// Phase is the updates' phase ("train", "validation"); none when
	// empty.
	Phase string `json:"phase,omitempty"`
	// Match are templates that must all be found in the line; Optional
	// are read when found.
	Match    []string `json:"match"`
	Optional []string `json:"optional,omitempty"`
	// RateUnit is the unit of a "rate" hole ("it/s").
	RateUnit string `json:"rate_unit,omitempty"`
	// Done is a literal that, on a line the entry read, says the job
	// is over (percentage 100): joblib's "finished".
	Done string `json:"done,omitempty"`

	match, optional []template
}

// Counter is a counter hole's value on a line an entry read: the host
// (or the built-in plugin's Parse) turns it into a step once it rises
// from one line of the entry to the next (see Rise).
type Counter struct {
	Entry string
	Value int64
}

// Compile checks e's templates; its error names the template and what
// is wrong with it.
func (e *Entry) Compile() error {
	if len(e.Match) == 0 {
		return errors.New("needs a \"match\" template")
	}
	e.match, e.optional = nil, nil
	var errs []error
	for _, group := range []struct {
		src []string
		dst *[]template
	}{{e.Match, &e.match}, {e.Optional, &e.optional}} {
		for _, s := range group.src {
			t, err := compile(s)
			if err != nil {
				errs = append(errs, errors.New("template "+strconv.Quote(s)+": "+err.Error()))
				continue
			}
			*group.dst = append(*group.dst, t)
		}
	}
	named, metrics := 0, 0
	for _, t := range append(e.match[:len(e.match):len(e.match)], e.optional...) {
		for _, h := range t.holes() {
			if h.name != "_" {
				named++
			}
			if !known[h.name] {
				metrics++
			}
		}
	}
	if metrics > maxMetrics {
		errs = append(errs, errors.New("more than "+strconv.Itoa(maxMetrics)+" metric holes"))
	}
	if named == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("no template has a named hole ({step}, {loss}, ...): it would say nothing"))
	}
	return errors.Join(errs...)
}

// known are the hole names that are not metrics.
var known = map[string]bool{"_": true, "step": true, "total": true, "epoch": true, "epoch_total": true,
	"percent": true, "eta": true, "rate": true, "counter": true}

// maxMetrics is how many metric holes an entry may have.
const maxMetrics = 8

// Read reads line by e: the update, the metrics it read (in the order
// of the holes; add appends one), and the counter it read (Counter.Entry
// empty when none). ok is false when a match template is not found or a
// value is out of range (a total of 0, a step past its total, an epoch
// past the epoch total).
func (e *Entry) Read(line string, add func(name string, v float64)) (u sdk.Progress, c Counter, ok bool) {
	var v values
	for i := range e.match {
		if i == 0 {
			if !e.match[i].find(line, &v) {
				return u, c, false
			}
			continue
		}
		var o values
		if !e.match[i].find(line, &o) {
			return u, c, false
		}
		v.merge(&o)
	}
	for i := range e.optional {
		var o values
		if e.optional[i].find(line, &o) {
			v.merge(&o)
		}
	}
	if v.has&hTotal != 0 && v.total <= 0 || v.has&hEpochTotal != 0 && v.epochTotal <= 0 ||
		v.has&(hStep|hTotal) == hStep|hTotal && v.step > v.total ||
		v.has&(hEpoch|hEpochTotal) == hEpoch|hEpochTotal && v.epochF > float64(v.epochTotal) ||
		v.has&hPercent != 0 && !(v.percent >= 0 && v.percent <= 100) {
		return u, c, false
	}
	u.Source, u.Phase = e.Source, e.Phase
	if u.Source == "" {
		u.Source = e.Name
	}
	u.Step, u.Total, u.EpochTotal = v.step, v.total, v.epochTotal
	if v.has&hEpoch != 0 {
		u.Epoch = int64(v.epochF)
		if v.elapsed {
			// 1.35 epochs done: the run is in epoch 2; 3 of 3: done.
			u.Epoch = int64(v.epochF) + 1
			if v.epochTotal > 0 {
				u.Epoch = min(u.Epoch, v.epochTotal)
			}
		}
	}
	if v.has&hPercent != 0 {
		u.Percentage = v.percent
	} else if v.step > 0 && v.total > 0 {
		u.Percentage = float64(v.step) * 100 / float64(v.total)
	}
	if e.Done != "" && strings.Contains(line, e.Done) {
		u.Percentage = 100
	}
	if v.has&hETA != 0 && v.eta >= 0 {
		u.ETASeconds = v.eta
	}
	if v.has&hRate != 0 && v.rate > 0 {
		u.Rate, u.RateUnit = v.rate, e.RateUnit
	}
	if v.has&hCounter != 0 {
		c = Counter{Entry: e.Name, Value: v.counter}
	}
	if add != nil {
		for i := 0; i < v.nm; i++ {
			add(v.metrics[i].k, v.metrics[i].v)
		}
	}
	return u, c, true
}

const (
	hStep = 1 << iota
	hTotal
	hEpoch
	hEpochTotal
	hPercent
	hETA
	hRate
	hCounter
)

// values are the holes a line filled.
type values struct {
	has                int
	step, total        int64
	epochTotal         int64
	epochF             float64
	elapsed            bool
	percent, eta, rate float64
	counter            int64
	metrics            [maxMetrics]struct {
		k string
		v float64
	}
	nm int
}

func (v *values) merge(o *values) {
	if o.has&hStep != 0 {
		v.step = o.step
	}
	if o.has&hTotal != 0 {
		v.total = o.total
	}
	if o.has&hEpoch != 0 {
		v.epochF, v.elapsed = o.epochF, o.elapsed
	}
	if o.has&hEpochTotal != 0 {
		v.epochTotal = o.epochTotal
	}
	if o.has&hPercent != 0 {
		v.percent = o.percent
	}
	if o.has&hETA != 0 {
		v.eta = o.eta
	}
	if o.has&hRate != 0 {
		v.rate = o.rate
	}
	if o.has&hCounter != 0 {
		v.counter = o.counter
	}
	v.has |= o.has
	for i := 0; i < o.nm && v.nm < len(v.metrics); i++ {
		v.metrics[v.nm] = o.metrics[i]
		v.nm++
	}
}

func (v *values) set(name string, k kind, x float64) bool {
	switch name {
	case "_":
	case "step":
		v.step, v.has = int64(x), v.has|hStep
	case "total":
		v.total, v.has = int64(x), v.has|hTotal
	case "epoch":
		v.epochF, v.elapsed, v.has = x, k == kElapsed, v.has|hEpoch
	case "epoch_total":
		v.epochTotal, v.has = int64(x), v.has|hEpochTotal
	case "percent":
		v.percent, v.has = x, v.has|hPercent
	case "eta":
		v.eta, v.has = x, v.has|hETA
	case "rate":
		v.rate, v.has = x, v.has|hRate
	case "counter":
		v.counter, v.has = int64(x), v.has|hCounter
	default:
		if v.nm < len(v.metrics) {
			v.metrics[v.nm].k, v.metrics[v.nm].v = name, x
			v.nm++
		}
	}
	return true
}

// Rise is the counter rule, kept by whoever sees an entry's lines in
// order: prev is the entry's last counter value (0: none yet), next the
// line's. The line is progress (step next) only when it rises; a lower
// value starts the count again (a new pass), reported once it rises.
func Rise(prev, next int64) (step int64, ok bool) {
	if prev > 0 && next > prev {
		return next, true
	}
	return 0, false
}

// number helpers

func isDigit(c byte) bool  { return '0' <= c && c <= '9' }
func isLetter(c byte) bool { return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' }
func isBlank(c byte) bool  { return c == ' ' || c == '\t' }

// readInt reads digits at s[i:]; grouped allows thousands commas
// ("1,851": a comma followed by exactly three digits).
func readInt(s string, i int, grouped bool) (n int64, j int, ok bool) {
	j = i
	for j < len(s) {
		c := s[j]
		if isDigit(c) {
			if n > math.MaxInt64/10-10 {
				return 0, i, false
			}
			n = n*10 + int64(c-'0')
			j++
			continue
		}
		if grouped && c == ',' && j > i && j+3 < len(s) &&
			isDigit(s[j+1]) && isDigit(s[j+2]) && isDigit(s[j+3]) && (j+4 == len(s) || !isDigit(s[j+4])) {
			j++
			continue
		}
		break
	}
	return n, j, j > i
}

// readNum reads a decimal number at s[i:]: a sign, digits, a fraction,
// an exponent; nan and inf (any case) too. The value is what
// strconv.ParseFloat gives for the text.
func readNum(s string, i int) (v float64, j int, ok bool) {
	j = i
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	if j+3 <= len(s) && (strings.EqualFold(s[j:j+3], "nan") || strings.EqualFold(s[j:j+3], "inf")) {
		k := j + 3
		if k+5 <= len(s) && strings.EqualFold(s[j:k+5], "infinity") {
			k += 5
		}
		if k < len(s) && isLetter(s[k]) {
			return 0, i, false
		}
		v, err := strconv.ParseFloat(s[i:k], 64)
		return v, k, err == nil
	}
	digits := 0
	for j < len(s) && isDigit(s[j]) {
		j++
		digits++
	}
	if j+1 < len(s) && s[j] == '.' && isDigit(s[j+1]) {
		j++
		for j < len(s) && isDigit(s[j]) {
			j++
			digits++
		}
	}
	if digits == 0 {
		return 0, i, false
	}
	if j+1 < len(s) && (s[j] == 'e' || s[j] == 'E') {
		k := j + 1
		if k < len(s) && (s[k] == '-' || s[k] == '+') {
			k++
		}
		if k < len(s) && isDigit(s[k]) {
			for k < len(s) && isDigit(s[k]) {
				k++
			}
			j = k
		}
	}
	v, err := strconv.ParseFloat(s[i:j], 64)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, i, false
	}
	return v, j, true
}

// readClock reads [[d:]h:]mm:ss (at least one colon) at s[i:], in seconds.
func readClock(s string, i int) (secs float64, j int, ok bool) {
	j = i
	parts := 0
	for {
		n, k, ok := readInt(s, j, false)
		if !ok {
			break
		}
		secs = secs*60 + float64(n)
		parts++
		j = k
		if j+1 < len(s) && s[j] == ':' && isDigit(s[j+1]) && parts < 4 {
			j++
			continue
		}
		break
	}
	if parts < 2 {
		return 0, i, false
	}
	return secs, j, true
}
