package progress

import (
	"math"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// parseRunbox reads the contract line `##PROGRESS## {json}`. Text before
// the marker (timestamps, logger prefixes) is ignored, and so is text after
// the JSON object.
func parseRunbox(s string) (u sdk.Progress, ok bool) {
	k := lastIndex(s, "##PROGRESS##")
	rest := strings.TrimSpace(s[k+len("##PROGRESS##"):])
	if rest == "" || rest[0] != '{' {
		return u, false
	}
	var buf [8]member // the members of a usual object: on the stack
	ms := buf[:0]
	if !sdk.DecodeJSONObject(rest, func(k string, v sdk.JSONValue) { ms = append(ms, member{k, v}) }) {
		return u, false
	}
	u.Source = "runbox"
	// In order, a repeated key counting once, at its last place, so that
	// aliases ("step", "current", "n") resolve as the last one written.
	for i, m := range ms {
		if laterMember(ms[i+1:], m.key) {
			continue
		}
		runboxField(&u, m.key, m.val)
	}
	return runboxDone(u), true
}

// member is one member of a JSON object.
type member struct {
	key string
	val sdk.JSONValue
}

func laterMember(ms []member, key string) bool {
	for _, m := range ms {
		if m.key == key {
			return true
		}
	}
	return false
}

// runboxField applies one field of the contract object.
func runboxField(u *sdk.Progress, key string, v sdk.JSONValue) {
	switch key {
	case "phase", "stage":
		if v.Kind == sdk.JSONString {
			u.Phase = v.Str
		}
	case "message", "msg":
		if v.Kind == sdk.JSONString {
			u.Message = v.Str
		}
	case "rate_unit", "unit":
		if v.Kind == sdk.JSONString {
			u.RateUnit = v.Str
		}
	case "metrics":
		if mm, ok := v.Any.(map[string]any); ok {
			for mk, mv := range mm {
				if f, ok := num(mv); ok {
					addMetric(&u.Metrics, mk, f)
				}
			}
		}
	default:
		var f float64
		var ok bool
		switch v.Kind {
		case sdk.JSONNumber:
			f, ok = v.Num, true
		case sdk.JSONString:
			f, ok = numString(v.Str)
		}
		if !ok {
			return
		}
		switch key {
		case "step", "current", "n", "total", "percentage", "percent", "pct", "progress",
			"epoch", "epoch_total", "epochs", "total_epochs", "eta_seconds", "eta", "rate":
			if !finite(f) {
				return // only a metric may be NaN or ±Inf
			}
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

func runboxDone(u sdk.Progress) sdk.Progress {
	if u.Percentage == 0 && u.Total > 0 && u.Step > 0 {
		u.Percentage = pct(u.Step, u.Total)
	}
	if u.Percentage > 100 || u.Percentage < 0 {
		u.Percentage = 0
	}
	return u
}

// num reads a metric value: a JSON number or a numeric string, "NaN" and
// "Infinity" (how JSON loggers write them) included.
func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case string:
		return numString(x)
	}
	return 0, false
}

// numString reads a numeric string, "NaN" and "Infinity" included.
func numString(s string) (float64, bool) {
	f, j, ok := parseNum(s, 0)
	return f, ok && j == len(s)
}

// toInt rounds a float to an int64, refusing what does not fit.
func toInt(f float64) int64 {
	if !finite(f) || f < 0 || f > 1e15 {
		return 0
	}
	return int64(math.Round(f))
}
