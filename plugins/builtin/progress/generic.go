package progress

import (
	"math/bits"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Generic lines from hand-written training loops:
//
//	Step 45/100 loss=0.5     step 45 of 100     Epoch [3/10]    epoch 3 of 10
//	Train Epoch: 1 [1280/60000 (2%)]	Loss: 0.306       (PyTorch examples)
//	Iteration 45     45/100 batches     Batch 45/100     Progress: 45%
//	loss: 0.5                                             (metrics only)
//
// Keywords are matched in the spellings the prefilter lists (Step, step,
// STEP, ...), so that a line the host never sends could not match anyway.
//
// Each spelling comes with its classify bit: a spelling s does not
// contain is not searched for.
type keyword struct {
	w   string
	bit uint64
}

var (
	kwEpoch = []keyword{{"Epoch", fEpochCap}, {"epoch", fEpochLow}, {"EPOCH", fEpochUp}}
	kwStep  = []keyword{{"Step", fStepCap}, {"step", fStepLow}, {"STEP", fStepUp}, {"Iter", fIterCap},
		{"iter", fIterLow}, {"ITER", fIterUp}, {"Batch", fBatchCap}, {"batch", fBatchLow}}
	kwProg = []keyword{{"Progress", fProgCap}, {"progress", fProgLow}}
	kwLoss = []string{"loss", "Loss", "LOSS"}

	maskEpoch, maskStep, maskProg = kwMask(kwEpoch), kwMask(kwStep), kwMask(kwProg)
	// kwWord[i] is the spelling whose bit is 1<<i. Bits ascend in the
	// order the lists above give, so walking a mask's bits from the
	// lowest tries the spellings in that order.
	kwWord = func() (t [64]string) {
		for _, ks := range [][]keyword{kwEpoch, kwStep, kwProg} {
			for i, k := range ks {
				if i > 0 && k.bit < ks[i-1].bit {
					panic("progress: keyword bits out of order")
				}
				t[bits.TrailingZeros64(k.bit)] = k.w
			}
		}
		return t
	}()
)

func kwMask(ks []keyword) (m uint64) {
	for _, k := range ks {
		m |= k.bit
	}
	return m
}

// parseGeneric reads s, whose classify bits are f. Its metrics go to
// st.metrics, not u.Metrics (emit merges them): a map per line costs a
// guest more than the line's parsing.
func parseGeneric(s string, f uint64, st *state) (u sdk.Progress, ok bool) {
	st.metrics = st.metrics[:0]
	if f&(fIterLow) != 0 && index(s, "Best iteration") >= 0 && index(s, "Stopping") >= 0 {
		// XGBoost's early stop: training ended; the number after it is
		// the best round, not a newer one (nor is the row it reprints)
		st.stopped = true
		return sdk.Progress{Percentage: 100, Message: stoppedMessage, Source: st.source}, true
	}
	found := false
	if n, m, end, ok := kwNum(s, maskEpoch, f); ok {
		u.Epoch, u.EpochTotal, found = n, m, true
		if m == 0 {
			// "Train Epoch: 1 [1280/60000 (2%)]", "Epoch[28](990/998):"
			j := skipSpaces(s, end)
			if j < len(s) && (s[j] == '[' || s[j] == '(') {
				k := j + 1
				for k < len(s) && isDigit(s[k]) {
					k++
				}
				if n, m, ok := fraction(s, k); ok {
					u.Step, u.Total = n, m
				}
			} else if j < len(s) && s[j] == ':' {
				// fairseq: "epoch 002:    100 / 1102 loss=..."
				if n, m, ok := spacedFraction(s, skipSpaces(s, j+1)); ok {
					u.Step, u.Total = n, m
				}
			} else if j < len(s) && s[j] == ',' {
				// "Epoch  1, 13400/37527; acc: ...": the batch of the epoch
				if n, m, _, ok := numAfter(s, skipSpaces(s, j+1)); ok && m > 0 {
					u.Step, u.Total = n, m
				}
			}
		}
	}
	if u.Total == 0 && u.Step == 0 {
		// "40606/50000: episode: 573, ...", "191/446 (epoch 0), ...",
		// "[5000 | 5336.92] loss=0.80": a counter that leads the record
		if n, m, ok := leadingCount(s); ok {
			u.Step, u.Total, found = n, m, true
		}
	}
	if u.Total == 0 && u.Step == 0 {
		if n, m, end, ok := kwNum(s, maskStep, f); ok && !heading(s, end, m) {
			u.Step, u.Total, found = n, m, true
		}
	}
	if !found && f&maskEpoch != 0 {
		found = countedEpoch(s, &u) // "91300 iter, 7 epoch / 20 epochs"
	}
	if !found && f&(fEpochLow|fIterLow) != 0 {
		found = countedWords(s, &u) // "000 epoch, 06000 iter, loss 37.2"
	}
	if u.Total > 0 {
		u.Percentage = pct(u.Step, u.Total)
	} else if p, ok := kwPercent(s, f); ok {
		u.Percentage, found = p, true
	} else if p, ok := hashBar(s); ok && !found && f&maskEpoch != 0 {
		u.Percentage, found = p, true // "this epoch [#####.....] 10.84%"
	}
	if !found && f&fLossAny == 0 {
		n, ok := globalStep(s)
		if !ok || index(s, "reward") < 0 {
			return sdk.Progress{}, false // no key can hold "loss"
		}
		u.Step, found = n, true // "global_step=3553, episode_reward=28.0"
	}
	ms := st.metrics
	lossKV := false
	scanKV(s, func(k string, v float64) {
		if k == "" || structuralKey(k) { // as addMetric
			return
		}
		// a loss makes the line a training report, whatever its value
		lossKV = lossKV || containsAny(k, kwLoss)
		if (k == "Pass" || k == "pass") && found && u.Epoch == 0 && v >= 0 && v < 1e6 && v == float64(int64(v)) {
			u.Epoch = int64(v) // "Pass: 3, Batch: 4200": a pass over the data is an epoch
			return
		}
		ms = append(ms, metric{k, v}) // NaN and ±Inf included, as addMetric
	})
	if u.Step == 0 && (found || lossKV || hasLossLike(ms[len(st.metrics):])) {
		// "epoch: [1/2], global_step: 160, loss: ...", "global_step=3553,
		// episode_reward=28.0": the global step of a training record. On
		// its own ("restoring global_step=500") it is a setting.
		if n, ok := globalStep(s); ok {
			u.Step, found = n, true
		}
	}
	if !found && !lossKV {
		ms = ms[:len(st.metrics)] // no counter, no loss: settings
	}
	if !lossKV && f&fLossAny != 0 {
		ms = spacedLoss(s, ms)
	}
	if !found && len(ms) == 0 {
		return sdk.Progress{}, false
	}
	st.metrics = ms
	u.Source = "generic"
	return u, true
}

func containsAny(s string, subs []string) bool {
	for _, w := range subs {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// kwNum finds "<kw> N", "<kw> N/M", "<kw>: N", "<kw> [N/M]", "<kw> N of M"
// or "N/M <kw>s" for any keyword spelling in mask.
func kwNum(s string, mask, f uint64) (n, m int64, end int, ok bool) {
	for rem := f & mask; rem != 0; rem &= rem - 1 {
		kw := kwWord[bits.TrailingZeros64(rem)]
		for off := 0; off < len(s); {
			k := index(s[off:], kw)
			if k < 0 {
				break
			}
			k += off
			off = k + len(kw)
			if k > 0 && (isLetter(s[k-1]) || isDigit(s[k-1]) || s[k-1] == '_') {
				continue
			}
			i := k + len(kw)
			// plural and long forms: Epochs, Steps, Iteration(s), Batches
			for i < len(s) && isLetter(s[i]) {
				i++
			}
			w := s[k+len(kw) : i] // ASCII letters
			if w != "" && !strings.EqualFold(w, "s") && !strings.EqualFold(w, "es") && !strings.EqualFold(w, "ation") && !strings.EqualFold(w, "ations") {
				continue
			}
			// "Step 45", "Iteration 45"; a plural before a number is a
			// setting ("epochs: 10", "every 500 steps 3"), not progress.
			plural := w != "" && !strings.EqualFold(w, "ation")
			if n, m, end, ok := numAfter(s, skipSep(s, i)); ok && (!plural || m > 0) {
				return n, m, end, true
			}
			// "45/100 batches"
			if k >= 2 && s[k-1] == ' ' && isDigit(s[k-2]) {
				b := k - 1
				for b > 0 && isDigit(s[b-1]) {
					b--
				}
				if n, m, ok := fraction(s, b-1); ok && b >= 2 {
					return n, m, i, true
				}
			}
		}
	}
	return 0, 0, 0, false
}

// stoppedMessage marks, in the state the host keeps, that the job
// stopped early (so a later batch still drops the reprinted best round).
const stoppedMessage = "stopped early"

// globalStep reads "global_step: N", "global_step=N", "global step N".
func globalStep(s string) (int64, bool) {
	k := index(s, "global_step")
	if k < 0 {
		k = index(s, "global step")
	}
	if k < 0 || k > 0 && isWordByte(s[k-1]) {
		return 0, false
	}
	i := k + len("global_step")
	for i < len(s) && (s[i] == ' ' || s[i] == ':' || s[i] == '=') {
		i++
	}
	n, j, ok := parseUint(s, i)
	if !ok || j < len(s) && (isLetter(s[j]) || s[j] == '.' || s[j] == '/') {
		return 0, false
	}
	return n, true
}

// leadingCount reads a counter that leads a record: "N/M: ..." (after a
// list marker such as "2. "), "N/M (epoch e)", or "[N | elapsed]". A bare
// fraction at the start of a line says nothing (a ratio, a date), so it
// needs the colon or the epoch after it.
func leadingCount(s string) (n, m int64, ok bool) {
	i := 0
	for i < len(s) && (s[i] == '_' || s[i] == '*') {
		i++
	}
	if j := i; j < len(s) && isDigit(s[j]) {
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		if j+1 < len(s) && s[j] == '.' && s[j+1] == ' ' && j-i <= 3 {
			i = skipSpaces(s, j+1) // "2.  39497/50000: ..."
		}
	}
	if i < len(s) && s[i] == '[' {
		// "[5000 | 5336.92] loss=..."
		n, j, ok := parseUint(s, i+1)
		if !ok || !strings.HasPrefix(s[j:], " | ") {
			return 0, 0, false
		}
		if _, k, ok := parseNum(s, j+3); ok && k < len(s) && s[k] == ']' {
			return n, 0, true
		}
		return 0, 0, false
	}
	n, j, ok := parseUint(s, i)
	if !ok || j >= len(s) || s[j] != '/' {
		return 0, 0, false
	}
	m, end, ok := parseUint(s, j+1)
	if !ok || m < n || m == 0 {
		return 0, 0, false
	}
	if end < len(s) && s[end] == ':' && (end+1 == len(s) || s[end+1] == ' ') ||
		strings.HasPrefix(s[end:], " (epoch") || strings.HasPrefix(s[end:], " (Epoch") {
		return n, m, true
	}
	return 0, 0, false
}

// numAfter reads "N", "N/M", "N of M" at s[i:].
func numAfter(s string, i int) (n, m int64, end int, ok bool) {
	n, j, ok := parseUint(s, i)
	if !ok {
		return 0, 0, 0, false
	}
	if j < len(s) {
		c := s[j]
		if isLetter(c) || c == '.' && j+1 < len(s) && isDigit(s[j+1]) || c == ':' && j+1 < len(s) && isDigit(s[j+1]) || c == '-' || c == '_' || c == '%' {
			return 0, 0, 0, false
		}
		if c == '/' {
			m, e, ok := parseUint(s, j+1)
			if !ok || m < n || m == 0 {
				return 0, 0, 0, false
			}
			if e < len(s) && (s[e] == '/' || s[e] == '.' || s[e] == ':' || isLetter(s[e])) {
				return 0, 0, 0, false
			}
			return n, m, e, true
		}
		if t := s[j:]; strings.HasPrefix(t, " of ") {
			if m, e, ok := parseUint(s, j+4); ok && m >= n && m > 0 {
				return n, m, e, true
			}
		}
	}
	return n, 0, j, true
}

// kwPercent reads "Progress: 45%" / "progress 45.5 %".
func kwPercent(s string, f uint64) (float64, bool) {
	for rem := f & maskProg; rem != 0; rem &= rem - 1 {
		w := kwWord[bits.TrailingZeros64(rem)]
		k := index(s, w)
		if k < 0 {
			continue
		}
		i := skipSep(s, k+len(w))
		v, j, ok := parseNum(s, i)
		j = skipSpaces(s, j)
		if ok && j < len(s) && s[j] == '%' && v >= 0 && v <= 100 {
			return v, true
		}
	}
	return 0, false
}

// heading reports "Step 1: Install dependencies": a numbered instruction,
// not a training step ("iter 10: loss 2.345, time 51.2ms" is one).
func heading(s string, end int, total int64) bool {
	if total != 0 || end >= len(s) || s[end] != ':' {
		return false
	}
	i := skipSpaces(s, end+1)
	return i < len(s) && isLetter(s[i]) && !strings.ContainsAny(s[i:], "=:") && len(spacedLoss(s[i:], nil)) == 0 &&
		!lossNaN(s[i:])
}

// lossNaN reports "loss nan" (or inf): a training report whose loss is
// not a number, which spacedLoss does not record.
func lossNaN(s string) bool {
	k := indexFold(s, "loss ")
	if k < 0 {
		return false
	}
	v, _, ok := parseNum(s, skipSpaces(s, k+5))
	return ok && !finite(v)
}

// spacedFraction reads "N / M" or "N/M" at s[i:].
func spacedFraction(s string, i int) (n, m int64, ok bool) {
	n, j, ok := parseUint(s, i)
	if !ok {
		return 0, 0, false
	}
	j = skipSpaces(s, j)
	if j >= len(s) || s[j] != '/' {
		return 0, 0, false
	}
	m, k, ok := parseUint(s, skipSpaces(s, j+1))
	if !ok || m < n || m == 0 || k < len(s) && (isLetter(s[k]) || s[k] == '.' || s[k] == '/' || s[k] == ':') {
		return 0, 0, false
	}
	return n, m, true
}

// spacedLoss appends the losses written "loss 2.345" (no '=' or ':'):
// nanoGPT's "iter 10: loss 2.345", "step 500: train loss 2.1, val loss
// 2.2", "| loss  5.67 |". A word before "loss" names it ("train_loss").
func spacedLoss(s string, ms []metric) []metric {
	for off := 0; off < len(s); {
		k := indexFold(s[off:], "loss")
		if k < 0 {
			break
		}
		k += off
		off = k + 4
		ident := "" // "train_loss 0.357": a name glued to loss with '_'
		if k > 1 && s[k-1] == '_' {
			a := k - 1
			for a > 0 && (isLetter(s[a-1]) || s[a-1] == '_') {
				a--
			}
			if a < k-1 && (a == 0 || s[a-1] == ' ') {
				ident = s[a : k+4]
			}
		}
		if k > 0 && (isLetter(s[k-1]) || s[k-1] == '_' && ident == "") || off >= len(s) || s[off] != ' ' {
			continue
		}
		vi := skipSpaces(s, off)
		if vi+1 < len(s) && s[vi] == ':' && s[vi+1] == ' ' {
			vi = skipSpaces(s, vi+1) // nnU-Net v1: "train loss : -0.6745"
		}
		v, j, ok := parseNum(s, vi)
		if !ok || j < len(s) && (isLetter(s[j]) || s[j] == ':' || s[j] == '/') {
			continue
		}
		if ident != "" && strings.TrimSpace(s[j:]) != "" {
			// a glued name only on a line of one value (nnU-Net's
			// "...: train_loss 0.357"); on a record of several, the
			// record reader reads the names and their neighbours
			continue
		}
		key := "loss"
		if ident != "" {
			key = ident
		} else if b := k - 1; b > 0 && s[b] == ' ' && isLetter(s[b-1]) {
			a := b
			for a > 0 && isLetter(s[a-1]) {
				a--
			}
			switch strings.ToLower(s[a:b]) {
			case "train", "training":
				key = "train_loss"
			case "val", "valid", "validation":
				key = "val_loss"
			case "eval":
				key = "eval_loss"
			case "test":
				key = "test_loss"
			case "with":
				// "batch 71 ends with loss 0.25", "epoch 3 finished with
				// loss nan": the event's own loss
			default:
				continue // "best loss 0.5": prose, not a metric
			}
		}
		ms = append(ms, metric{key, v})
		off = j
	}
	return ms
}
