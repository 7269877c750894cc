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

// The Trainer's start-of-training block (often behind a logger prefix,
// "[INFO|trainer.py:2100] ... >>") and its notebook widget, pasted from
// Colab or Jupyter, are read by data: the hf-banner and hf-notebook
// entries of the format table (formats.go).
//
//	***** Running training *****
//	  Num Epochs = 3
//	  Total optimization steps = 1,851
//
//	[ 450/1000 10:12 < 12:30, 0.73 it/s, Epoch 1.35/3]
//	[60/60 05:12, Epoch 0/1]
