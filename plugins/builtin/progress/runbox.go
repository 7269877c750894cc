package progress

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// parseRunbox reads the contract line `##PROGRESS## {json}`. Text before
// the marker (timestamps, logger prefixes) is ignored, and so is text after
// the JSON object.
func parseRunbox(s string) (u sdk.Progress, ok bool) {
	k := strings.LastIndex(s, "##PROGRESS##")
	rest := strings.TrimSpace(s[k+len("##PROGRESS##"):])
	if rest == "" || rest[0] != '{' {
		return u, false
	}
	if ents, ok := scanFlat(rest); ok {
		u.Source = "runbox"
		for i, e := range ents {
			if laterKey(ents[i+1:], e.key) {
				continue // a repeated key: the last one counts, as in a map
			}
			switch e.kind {
			case entStr:
				runboxField(&u, e.key, e.str)
			case entNum:
				runboxField(&u, e.key, e.num)
			default:
				runboxField(&u, e.key, nil)
			}
		}
		return runboxDone(u), true
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(rest))
	if err := dec.Decode(&m); err != nil {
		return u, false
	}
	u.Source = "runbox"
	for key, v := range m {
		runboxField(&u, key, v)
	}
	return runboxDone(u), true
}

// runboxField applies one field of the contract object.
func runboxField(u *sdk.Progress, key string, v any) {
	{
		switch key {
		case "phase", "stage":
			if str, ok := v.(string); ok {
				u.Phase = str
			}
		case "message", "msg":
			if str, ok := v.(string); ok {
				u.Message = str
			}
		case "rate_unit", "unit":
			if str, ok := v.(string); ok {
				u.RateUnit = str
			}
		case "metrics":
			if mm, ok := v.(map[string]any); ok {
				for mk, mv := range mm {
					if f, ok := num(mv); ok {
						addMetric(&u.Metrics, mk, f)
					}
				}
			}
		default:
			f, ok := num(v)
			if !ok {
				return
			}
			switch key {
			case "step", "current", "n":
				u.Step = toInt(f)
			case "total":
				u.Total = toInt(f)
			case "percentage", "percent", "pct", "progress":
				u.Percentage = f
			case "epoch":
				u.Epoch = toInt(f)
			case "epoch_total", "epochs", "total_epochs":
				u.EpochTotal = toInt(f)
			case "eta_seconds", "eta":
				u.ETASeconds = f
			case "rate":
				u.Rate = f
			default:
				addMetric(&u.Metrics, key, f)
			}
		}
	}
}

func runboxDone(u sdk.Progress) sdk.Progress {
	if u.Percentage == 0 && u.Total > 0 && u.Step > 0 {
		u.Percentage = pct(u.Step, u.Total)
	}
	if u.Percentage > 100 || u.Percentage < 0 {
		u.Percentage = 0
	}
	return u
}

// num accepts JSON numbers and numeric strings.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, finite(x)
	case string:
		f, j, ok := parseNum(x, 0)
		return f, ok && j == len(x) && finite(f)
	}
	return 0, false
}

// toInt rounds a float to an int64, refusing what does not fit.
func toInt(f float64) int64 {
	if !finite(f) || f < 0 || f > 1e15 {
		return 0
	}
	return int64(math.Round(f))
}

// flatEnt is one member of a flat contract object.
type flatEnt struct {
	key, str string
	num      float64
	kind     int // entNum, entStr, entOther (true, false, null)
}

const (
	entNum = iota
	entStr
	entOther
)

// scanFlat reads the common contract object by hand: a flat JSON object of
// plain ASCII strings (no escapes), numbers, booleans and null, at most 16
// members. Anything else (nesting, escapes, non-ASCII, bad syntax) returns
// false and goes to encoding/json. Text after the object is ignored, as
// json.Decoder does.
func scanFlat(s string) ([]flatEnt, bool) {
	var buf [16]flatEnt
	n := 0
	i := skipJSONSpace(s, 1)
	if i < len(s) && s[i] == '}' {
		return nil, true
	}
	for {
		key, j, ok := flatStr(s, i)
		if !ok {
			return nil, false
		}
		j = skipJSONSpace(s, j)
		if j >= len(s) || s[j] != ':' {
			return nil, false
		}
		j = skipJSONSpace(s, j+1)
		if n == len(buf) || j >= len(s) {
			return nil, false
		}
		e := &buf[n]
		e.key = key
		switch c := s[j]; {
		case c == '"':
			e.str, j, ok = flatStr(s, j)
			e.kind = entStr
		case c == '-' || isDigit(c):
			e.num, j, ok = flatNum(s, j)
			e.kind = entNum
		case hasAt(s, j, "true"), hasAt(s, j, "null"):
			j += 4
			e.kind = entOther
		case hasAt(s, j, "false"):
			j += 5
			e.kind = entOther
		default:
			ok = false
		}
		if !ok {
			return nil, false
		}
		n++
		j = skipJSONSpace(s, j)
		if j >= len(s) {
			return nil, false
		}
		if s[j] == '}' {
			return buf[:n], true
		}
		if s[j] != ',' {
			return nil, false
		}
		i = skipJSONSpace(s, j+1)
	}
}

func skipJSONSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r') {
		i++
	}
	return i
}

// flatStr reads a JSON string of printable ASCII without escapes at s[i:].
func flatStr(s string, i int) (string, int, bool) {
	if i >= len(s) || s[i] != '"' {
		return "", i, false
	}
	for j := i + 1; j < len(s); j++ {
		c := s[j]
		if c == '"' {
			return s[i+1 : j], j + 1, true
		}
		if c < 0x20 || c >= 0x7f || c == '\\' {
			return "", i, false
		}
	}
	return "", i, false
}

// flatNum reads a JSON number at s[i:] (strict JSON grammar).
func flatNum(s string, i int) (float64, int, bool) {
	j := i
	if s[j] == '-' {
		j++
	}
	if j >= len(s) || !isDigit(s[j]) {
		return 0, i, false
	}
	if s[j] == '0' {
		j++
	} else {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
	}
	if j < len(s) && s[j] == '.' {
		j++
		d := j
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j == d {
			return 0, i, false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		return 0, i, false // rare: leave exponents to encoding/json
	}
	f, ok := fastFloat(s[i:j])
	return f, j, ok
}

func laterKey(ents []flatEnt, key string) bool {
	for _, e := range ents {
		if e.key == key {
			return true
		}
	}
	return false
}
