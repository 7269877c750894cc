package progress

import (
	"math"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Hugging Face Trainer log dicts (Python repr, sometimes JSON):
//
//	{'loss': 0.4321, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.5}
//	{'eval_loss': 0.3, 'eval_runtime': 1.2, 'epoch': 1.0}
//	{'train_runtime': 120.5, 'train_samples_per_second': 33.2, 'train_loss': 0.41, 'epoch': 3.0}
//
// Every numeric value becomes a metric; 'epoch' also sets Epoch to the
// epoch in progress (ceil: 0.5 is the first epoch, 1.0 the end of it).
func parseHFDict(s string, st *state) (u sdk.Progress, ok bool) {
	b := indexByte(s, '{')
	if b < 0 || b+2 >= len(s) || (s[b+1] != '\'' && s[b+1] != '"') {
		return u, false
	}
	if index(s, "epoch") < 0 && indexFold(s, "loss") < 0 {
		return u, false
	}
	eval := false
	for i := b + 1; i < len(s); {
		q := s[i]
		if q != '\'' && q != '"' {
			break
		}
		e := indexByte(s[i+1:], q)
		if e < 0 {
			break
		}
		key := s[i+1 : i+1+e]
		j := skipSpaces(s, i+2+e)
		if j >= len(s) || s[j] != ':' {
			break
		}
		j = skipSpaces(s, j+1)
		v, k, ok := parseNum(s, j)
		if !ok && j+2 < len(s) && (s[j] == '\'' || s[j] == '"') {
			// a number written as a string: {'Loss': '3.1416'}
			if v, k, ok = parseNum(s, j+1); ok && k < len(s) && s[k] == s[j] {
				k++
			} else {
				ok = false
			}
		}
		if ok {
			switch key {
			case "epoch":
				if v > 0 && v < 1e9 {
					u.Epoch = int64(math.Ceil(v))
					if float64(u.Epoch) != v {
						u.EpochExact = v
					}
				}
				st.addMetric(key, v)
			case "step", "global_step", "Step":
				u.Step = toInt(v)
			default:
				st.addMetric(key, v)
			}
			if strings.HasPrefix(key, "eval_") {
				eval = true
			}
		} else {
			// skip a non-numeric value up to the next ", '"
			k = j
			for k < len(s) && s[k] != ',' && s[k] != '}' {
				k++
			}
		}
		k = skipSpaces(s, k)
		if k >= len(s) || s[k] != ',' {
			break
		}
		i = skipSpaces(s, k+1)
	}
	if len(st.metrics) == 0 && u.Epoch == 0 && u.Step == 0 {
		return u, false
	}
	u.Source = "huggingface"
	if u.Step > 0 && st.total >= u.Step {
		u.Percentage = pct(u.Step, st.total)
	}
	if st.hasMetric("train_runtime") {
		u.Phase = "done"
	} else if eval {
		u.Phase = "evaluation"
	} else if st.hasMetric("loss") || st.hasMetric("Loss") {
		u.Phase = "train"
	}
	return u, true
}

// parseHFBanner reads the totals in the Trainer's start-of-training block:
//
//	***** Running training *****
//	  Num Epochs = 3
//	  Total optimization steps = 1,851
//
// (often behind a logger prefix: "[INFO|trainer.py:2100] ... >>").
func parseHFBanner(s string, f uint64) (u sdk.Progress, ok bool) {
	key, epochs := "Total optimization steps = ", false
	if f&fEpochCap != 0 {
		key, epochs = "Num Epochs = ", true
	}
	k := index(s, key)
	if k < 0 {
		return u, false
	}
	n, ok := groupedUint(s[k+len(key):])
	if !ok || n <= 0 {
		return u, false
	}
	if epochs {
		return sdk.Progress{Source: "huggingface", EpochTotal: n}, true
	}
	return sdk.Progress{Source: "huggingface", Total: n, Phase: "train"}, true
}

// groupedUint reads a whole string as a count with optional thousands
// commas: "1,851".
func groupedUint(s string) (n int64, ok bool) {
	s = strings.TrimSpace(s)
	if s == "" || s[0] == ',' {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == ',' {
			continue
		}
		if !isDigit(c) || n > 1e15 {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// parseHFNotebook reads the text of the Trainer's notebook progress
// widget, as pasted from Colab or Jupyter:
//
//	[ 450/1000 10:12 < 12:30, 0.73 it/s, Epoch 1.35/3]
//	[60/60 05:12, Epoch 0/1]
func parseHFNotebook(s string, st *state) (u sdk.Progress, ok bool) {
	if len(s) < 8 || s[0] != '[' || s[len(s)-1] != ']' {
		return u, false
	}
	n, m, ok := spacedFraction(s, skipSpaces(s, 1))
	if !ok {
		return u, false
	}
	e := index(s, "Epoch ")
	if e < 0 {
		return u, false
	}
	x, j, ok := parseNum(s, e+6)
	if !ok || x < 0 || j >= len(s) || s[j] != '/' {
		return u, false
	}
	t, _, ok := parseUint(s, j+1)
	if !ok || t <= 0 || x > float64(t) {
		return u, false
	}
	u.Step, u.Total, u.Percentage = n, m, pct(n, m)
	// "Epoch 1.35/3" is in the second epoch; "Epoch 3/3" is done.
	u.Epoch, u.EpochTotal = min(int64(x)+1, t), t
	if lt := indexByte(s, '<'); lt >= 0 && lt < e {
		k := skipSpaces(s, lt+1)
		c := k
		for c < len(s) && (isDigit(s[c]) || s[c] == ':') {
			c++
		}
		if v, ok := parseClock(s[k:c]); ok {
			u.ETASeconds = v
		}
	}
	if r := index(s, " it/s"); r > 0 && r < e {
		b := r
		for b > 0 && (isDigit(s[b-1]) || s[b-1] == '.') {
			b--
		}
		if v, _, ok := parseNum(s, b); ok && b < r {
			u.Rate, u.RateUnit = v, "it/s"
		}
	}
	u.Phase = "train"
	u.Source = "huggingface"
	return u, true
}
