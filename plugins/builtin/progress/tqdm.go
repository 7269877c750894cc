package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// tqdm bars, Lightning's TQDM and rich bars, Hugging Face's bars:
//
//	desc: 45%|████▌     | 45/100 [00:10<00:12, 4.50it/s, loss=0.123]
//	45it [00:10, 4.50it/s]
//	1.23M/4.56M [00:01<00:02, 1.20MB/s]
//	Epoch 3/9 ━━━━━━━━━━━━ 45/100 0:00:10 • 0:00:12 4.50it/s v_num: 0 loss: 0.1
func parseTqdm(s string, st *state) (u sdk.Progress, ok bool) {
	if p := lastIndex(s, "%|"); p >= 0 {
		return tqdmBar(s, p, st)
	}
	if b := index(s, "━"); b >= 0 && index(s, "•") >= 0 {
		return richBar(s, b, st)
	}
	if k := index(s, "•"); k > 0 {
		// a rich bar drawn in ASCII: "Epoch 0/0 ------------ 2/2 0:00:15 • ..."
		if b := index(s[:k], " ----------"); b >= 0 {
			if u, ok = richBar(s, b+1, st); ok {
				return u, true
			}
			st.metrics = st.metrics[:0]
		}
	}
	if b := index(s, "━"); b > 0 {
		if u, ok := heavyBar(s, b, st); ok {
			return u, true
		}
	}
	if index(s, "/s]") >= 0 || index(s, "/s,") >= 0 || index(s, "it/s") >= 0 || index(s, "s/it") >= 0 {
		return tqdmNoBar(s, st)
	}
	return u, false
}

// heavyBar reads Ultralytics' 2025 bar: "desc: 100% ━━━━━━ 8/8 4.6it/s 1.7s".
func heavyBar(s string, b int, st *state) (u sdk.Progress, ok bool) {
	p := strings.LastIndexByte(s[:b], '%')
	if p <= 0 || strings.TrimSpace(s[p+1:b]) != "" {
		return u, false
	}
	j := p
	for j > 0 && (isDigit(s[j-1]) || s[j-1] == '.') {
		j--
	}
	disp, _, ok := parseNum(s, j)
	if !ok || disp > 100 {
		return u, false
	}
	i := b
	for i < len(s) && (s[i] >= 0x80 || s[i] == ' ') {
		i++
	}
	n, total, end, ok := tqdmCount(s, i)
	if !ok || total == 0 {
		return u, false
	}
	u.Source = "tqdm"
	if f := strings.Fields(s[end:]); len(f) > 0 {
		u.Rate, u.RateUnit = parseRate(f[0])
	}
	desc := strings.TrimRight(s[:j], " ")
	applyDesc(desc, n, total, disp, &u, st)
	return u, true
}

func tqdmBar(s string, p int, st *state) (u sdk.Progress, ok bool) {
	j := p
	for j > 0 && isDigit(s[j-1]) {
		j--
	}
	if j == p || p-j > 3 {
		return u, false
	}
	disp, _, _ := parseUint(s, j)
	if disp > 100 {
		return u, false
	}
	tail := s[p+2:]
	if q := indexByte(tail, '|'); q >= 0 {
		tail = tail[q+1:]
	} else {
		tail = "" // wrapped mid-bar
	}
	u.Source = "tqdm"
	n, total, i, hasCount := tqdmCount(tail, 0)
	if hasCount {
		tail = cutGlued(tail, i, st)
	}
	if hasCount {
		tqdmBracket(tail, i, &u, st)
		if index(tail, "v_num") >= 0 {
			u.Source = "lightning"
		}
	}
	// A count cut by wrapping ("45/1") disagrees with the percentage.
	if !hasCount || total == 0 || pct(n, total)-float64(disp) > 1.5 || float64(disp)-pct(n, total) > 1.5 {
		n, total = 0, 0
	}
	desc := s[:j]
	whole := desc
	if k := strings.LastIndexAny(desc, "]|"); k >= 0 {
		desc = desc[k+1:] // an earlier redraw or a logger prefix
	}
	applyDesc(desc, n, total, float64(disp), &u, st)
	if u.Epoch == 0 && !st.side && len(whole) > len(desc) {
		// "Train epoch [1/1]:  21%|...": the ']' closed the epoch's own
		// bracket, not a prefix; the epoch is the run's.
		if d := describe(strings.TrimRight(strings.TrimSpace(whole), ":")); d.epoch > 0 && !d.outer {
			u.Epoch, u.EpochTotal = d.epoch, d.epochTotal
		}
	}
	return u, true
}

// applyDesc decides, from the bar's description, whether n/total are
// epochs (outer bar) or steps, and what phase the bar names.
func applyDesc(desc string, n, total int64, disp float64, u *sdk.Progress, st *state) {
	desc = strings.TrimRight(strings.TrimSpace(desc), ":")
	if indexByte(desc, ':') >= 0 || indexByte(desc, '=') >= 0 {
		// metrics written into the description: "Loss: 0.54: : 11it"
		scanKV(strings.TrimRight(desc, ": "), func(k string, v float64) {
			if !nonMetric(k) {
				st.addMetric(k, v)
			}
		})
	}
	d := describe(desc)
	if sideBar(desc, d.phase, u.RateUnit) || dataPass(desc, n, total, u, st) {
		// Not the job's main work: the line is read (no other parser
		// takes it) but changes nothing.
		*u = sdk.Progress{}
		st.metrics, st.side = st.metrics[:0], true
		return
	}
	if d.lightning {
		u.Source = "lightning"
	}
	if d.outer {
		u.Epoch, u.EpochTotal = n, total
		if st.total == 0 {
			u.Percentage = pctOr(n, total, disp)
		} else {
			// rate and ETA belong to the inner bar once there is one.
			u.Rate, u.RateUnit, u.ETASeconds = 0, "", 0
		}
		return
	}
	if desc == "" && total > 0 {
		if st.nested && st.total > total {
			// A bar without a description drawn below a longer one:
			// an evaluation loop inside training (Hugging Face's
			// prediction bar). The step stays the training bar's.
			*u = sdk.Progress{}
			st.metrics, st.side = st.metrics[:0], true
			return
		}
		if !st.nested && total == st.total && (st.phase == "evaluation" || st.phase == "validation") {
			d.phase = "train" // the training bar again, after evaluating
		}
	}
	if d.row {
		tableRow2(desc, st)
	}
	u.Epoch, u.EpochTotal = d.epoch, d.epochTotal
	u.Phase = d.phase
	u.Step, u.Total = n, total
	u.Percentage = pctOr(n, total, disp)
}

func pctOr(n, total int64, disp float64) float64 {
	if total > 0 {
		return pct(n, total)
	}
	return disp
}

type descInfo struct {
	epoch, epochTotal int64
	phase             string
	outer, lightning  bool
	row               bool // the description is a table row (YOLO)
}

// describe reads a bar description: "Epoch 3", "Epoch 3/10", "Epochs",
// "Validation DataLoader 0", "Training", "Sanity Checking", ...
func describe(desc string) (d descInfo) {
	if desc == "" {
		return d
	}
	low := desc
	// The letters desc holds, folded: a word with a letter outside lm
	// cannot be in desc, and is not searched for.
	lm := letterMask(desc)
	e := -1
	if lm&lmEpoch == lmEpoch {
		e = indexWord(desc, "epoch")
	}
	if e >= 0 {
		i := e + 5
		if i < len(desc) && desc[i]|0x20 == 's' {
			i++
		}
		i = skipSep(desc, i)
		if n, j, ok := parseUint(desc, i); ok && (j == len(desc) || !isLetter(desc[j]) && desc[j] != '.') {
			d.epoch = n
			if j+1 < len(desc) && desc[j] == '/' {
				d.epochTotal, _, _ = parseUint(desc, j+1)
			} else if k := indexFold(desc[j:], " of "); k >= 0 && k < 3 {
				d.epochTotal, _, _ = parseUint(desc, j+k+4)
			}
			if d.epochTotal < d.epoch {
				d.epochTotal = 0
			}
			d.phase = "train"
		} else if strings.TrimSpace(desc[skipSep(desc, i):]) == "" {
			d.outer = true
			return d
		}
	}
	if e < 0 && d.epoch == 0 {
		yoloEpoch(desc, &d)
		d.row = d.epoch != 0
	}
	switch {
	case lm&lmSanity == lmSanity && indexFold(low, "sanity check") >= 0:
		d.phase, d.lightning = "sanity_check", true
	case lm&lmVal == lmVal && (indexFold(low, "validat") >= 0 || indexWord(low, "val") >= 0 || indexWord(low, "valid") >= 0):
		d.phase = "validation"
	case lm&lmEval == lmEval && indexFold(low, "eval") >= 0:
		d.phase = "evaluation"
	case lm&lmTest == lmTest && (indexWord(low, "test") >= 0 || indexWord(low, "testing") >= 0):
		d.phase = "test"
	case lm&lmPredict == lmPredict && indexFold(low, "predict") >= 0:
		d.phase = "predict"
	case lm&lmTrain == lmTrain && indexFold(low, "train") >= 0:
		d.phase = "train"
	case d.phase == "":
		d.phase = lastSegment(desc)
	}
	if lm&lmDataLoader == lmDataLoader && index(desc, "DataLoader") >= 0 {
		d.lightning = true
	}
	return d
}

// indexWord finds w (lowercase) in s as a whole word, ignoring case.
func indexWord(s, w string) int {
	off := 0
	for {
		k := indexFold(s[off:], w)
		if k < 0 {
			return -1
		}
		k += off
		e := k + len(w)
		if (k == 0 || !isLetter(s[k-1]) && s[k-1] != '_') && (e == len(s) || !isLetter(s[e]) || (s[e]|0x20 == 's' && (e+1 == len(s) || !isLetter(s[e+1])))) {
			return k
		}
		off = k + 1
	}
}

// skipSep skips spaces and the separators people put between a word and
// its number: "Epoch: 3", "Epoch [3/10]", "epoch=3", "Epoch #3".
func skipSep(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == ':' || s[i] == '=' || s[i] == '[' || s[i] == '(' || s[i] == '#') {
		i++
	}
	return i
}

// lastSegment returns the part of a description after logger prefixes,
// or "" when it is too long or empty to be a phase.
func lastSegment(desc string) string {
	for _, sep := range []string{"] ", " - ", ": ", " | "} {
		if k := lastIndex(desc, sep); k >= 0 {
			desc = desc[k+len(sep):]
		}
	}
	desc = strings.TrimSpace(desc)
	if len(desc) > 48 || desc == "" || isDigit(desc[0]) {
		// too long, or a timestamp or counter left by a prefix
		return ""
	}
	if stepWord(desc) {
		return "train" // "Steps", "Iteration": the training loop
	}
	return strings.ToValidUTF8(desc, "")
}

// stepWord reports a description that only names the step counter.
func stepWord(w string) bool {
	switch strings.ToLower(w) {
	case "step", "steps", "iter", "iters", "iteration", "iterations":
		return true
	}
	return false
}

// yoloEpoch reads an epoch from a description that starts with "N/M"
// followed only by numeric columns (Ultralytics YOLO:
// "      3/100      3.2G      1.234      2.345         32        640").
func yoloEpoch(desc string, d *descInfo) {
	i := skipSpaces(desc, 0)
	n, j, ok := parseUint(desc, i)
	if !ok || j >= len(desc) || desc[j] != '/' {
		return
	}
	m, k, ok := parseUint(desc, j+1)
	if !ok || m < n || m == 0 || k < len(desc) && desc[k] != ' ' {
		return
	}
	// the other columns: numbers, possibly with a unit letter ("3.2G")
	for ; k < len(desc); k++ {
		c := desc[k]
		if !(isDigit(c) || c == ' ' || c == '.' || c == 'G' || c == 'M' || c == 'K' || c == 'B') {
			return
		}
	}
	d.epoch, d.epochTotal, d.phase = n, m, "train"
}

// siMult holds the multiplier of each SI suffix byte, 0 for the others
// (a table, not a map: a map lookup costs a guest many branches).
var siMult = [256]float64{'k': 1e3, 'K': 1e3, 'M': 1e6, 'G': 1e9, 'T': 1e12, 'P': 1e15}

// tqdmCount reads "45/100", "1.23M/4.56M", "45it", "1.23MB" at s[i:]
// (after spaces). It returns the end index.
func tqdmCount(s string, i int) (n, total int64, end int, ok bool) {
	i = skipSpaces(s, i)
	a, j, ok := scaledNum(s, i)
	if !ok {
		return 0, 0, i, false
	}
	n = toInt(a)
	if j < len(s) && s[j] == '/' {
		b, k, ok := scaledNum(s, j+1)
		if !ok || b <= 0 {
			return 0, 0, i, false
		}
		return n, toInt(b), k, true
	}
	for j < len(s) && (isLetter(s[j]) || s[j] == '/') {
		j++
	}
	return n, 0, j, true
}

func scaledNum(s string, i int) (float64, int, bool) {
	v, j, ok := parseNum(s, i)
	if !ok || v < 0 {
		return 0, i, false
	}
	if j < len(s) {
		if m := siMult[s[j]]; m != 0 && (j+1 == len(s) || s[j+1] != 's') {
			v *= m
			j++
		}
	}
	return v, j, true
}

// tqdmBracket reads "[00:10<00:12, 4.50it/s, loss=0.123]" at s[i:].
func tqdmBracket(s string, i int, u *sdk.Progress, st *state) {
	i = skipSpaces(s, i)
	if i >= len(s) || s[i] != '[' {
		return
	}
	in := s[i+1:]
	if k := strings.LastIndexByte(in, ']'); k >= 0 {
		in = in[:k]
	}
	times, rest, _ := strings.Cut(in, ",")
	el, rem, hasETA := strings.Cut(times, "<")
	if hasETA {
		if eta, ok := parseClock(rem); ok {
			u.ETASeconds = eta
		}
	}
	rate, post, _ := strings.Cut(rest, ",")
	u.Rate, u.RateUnit = parseRate(rate)
	if u.Rate >= dataPassRate { // only dataPass asks; most bars are slower
		e, ok := parseClock(el)
		st.instant = ok && e < 1
	}
	if post != "" {
		scanKV(post, func(k string, v float64) {
			if !structuralKey(k) {
				st.addMetric(k, v)
			}
		})
	}
}

// parseRate reads "4.50it/s", "4.50s/it", "1.20MB/s", "2.3tok/s".
func parseRate(r string) (float64, string) {
	r = strings.TrimSpace(r)
	v, j, ok := parseNum(r, 0)
	if !ok || v <= 0 {
		return 0, ""
	}
	unit := strings.TrimSpace(r[j:])
	if unit == "" || len(unit) > 16 || indexByte(unit, '/') < 0 || indexByte(unit, ' ') >= 0 {
		return 0, ""
	}
	return v, unit
}

// tqdmNoBar reads bars without a "%|": unknown totals ("45it [00:10,
// 4.50it/s]") and bars squeezed to no bar ("45/100 [00:10<00:12, ...]").
func tqdmNoBar(s string, st *state) (u sdk.Progress, ok bool) {
	for off := 0; off < len(s); {
		k := indexByte(s[off:], '[')
		if k < 0 {
			return u, false
		}
		k += off
		off = k + 1
		if k+3 >= len(s) || !isDigit(s[k+1]) {
			continue
		}
		c := k + 1
		for c < len(s) && (isDigit(s[c]) || s[c] == ':') {
			c++
		}
		if c >= len(s) || (s[c] != ',' && s[c] != '<') || indexByte(s[k+1:c], ':') < 0 {
			continue
		}
		// the count is the last field before the bracket.
		e := k
		for e > 0 && s[e-1] == ' ' {
			e--
		}
		b := e
		for b > 0 && s[b-1] != ' ' && s[b-1] != '|' && s[b-1] != ':' {
			b--
		}
		if b == e || !isDigit(s[b]) {
			continue
		}
		n, total, end, ok := tqdmCount(s[:e], b)
		if !ok || end != e {
			continue
		}
		u.Source = "tqdm"
		tqdmBracket(s, k, &u, st)
		if u.Rate == 0 && u.ETASeconds == 0 && index(s[k:], "?") < 0 {
			return sdk.Progress{}, false
		}
		applyDesc(s[:b], n, total, 0, &u, st)
		return u, true
	}
	return u, false
}

// richBar reads Lightning's RichProgressBar, whose bar starts at s[b]
// (━, or '-' where the paste lost it):
//
//	Epoch 3/9  ━━━━━━━━━━━━ 45/100 0:00:10 • 0:00:12 4.50it/s v_num: 0 loss: 0.1
func richBar(s string, b int, st *state) (u sdk.Progress, ok bool) {
	i := b
	for i < len(s) && (s[i] >= 0x80 || s[i] == ' ' || s[i] == '-') {
		i++
	}
	n, total, end, ok := tqdmCount(s, i)
	if !ok || total == 0 {
		return u, false
	}
	u.Source = "lightning"
	rest := s[end:]
	if _, after, ok := strings.Cut(rest, "•"); ok {
		f := strings.Fields(after)
		if len(f) > 0 {
			if eta, ok := parseClock(f[0]); ok {
				u.ETASeconds = eta
			}
		}
		if len(f) > 1 {
			u.Rate, u.RateUnit = parseRate(f[1])
		}
		scanKV(after, func(k string, v float64) {
			if !structuralKey(k) {
				st.addMetric(k, v)
			}
		})
	}
	applyDesc(s[:b], n, total, 0, &u, st)
	if u.Source == "tqdm" {
		u.Source = "lightning"
	}
	return u, true
}

// cutGlued cuts what a program printed right after a bar without a
// newline ("... 3.1s/it]Iter 20: Train loss 3.2"): st.glued gets it, for
// Parse to read as a line of its own.
func cutGlued(tail string, i int, st *state) string {
	i = skipSpaces(tail, i)
	if i >= len(tail) || tail[i] != '[' {
		return tail
	}
	k := indexByte(tail[i:], ']')
	if k < 0 {
		return tail
	}
	k += i + 1
	rest := strings.TrimSpace(tail[k:])
	if len(rest) >= 3 && (isLetter(rest[0]) || rest[0] == '{' || rest[0] == '[') {
		st.glued = rest
		return tail[:k]
	}
	return tail
}
