package progress

import (
	"strings"

	"github.com/runbox/runbox/plugins/builtin/decl"
	"github.com/runbox/runbox/sdk"
)

// The generic record reader (issue #15): log records that no format
// parser above took, read by their shape rather than by framework.
//
//	[N]  name:value ...            [N]:  train's l2:0.08   (boosting rounds)
//	N:   learn: 0.95  test: 0.82                           (CatBoost)
//	Iteration:21, training auc : 0.65                      (LightGBM CLI)
//	Chain 1 Iteration:  400 / 5000 [  8%]                  (Stan)
//	[e/E][i/N]  [e][i/N/G]  [train: e, i / N]              (custom loggers)
//	Nepoch:train:A-Bbatch: loss=...   N/Mepoch started      (ESPnet)
//	| name | value |                                       (stable-baselines)
//	[Parallel(n_jobs=8)]: Done 8 out of 10 | elapsed       (joblib)
//	Trial 54 finished with value: ...                      (Optuna)
//	EPOCH 1 - PROGRESS: at 99.84% examples                 (gensim)
//	`Trainer.fit` stopped, Finish train, completed training (the end)
//
// Metrics are every "name: value" / "name=value" whose name is a few
// words (training's log loss, valid_1 auc, Loss/total), less counters,
// times and throughput.

// readRecord is parseRecord; counted says another reader found this
// line's counters (so its spaced "name value" pairs are metrics too);
// keywords says the line has a step, epoch or loss keyword (classify's
// bits). Without one, only the shapes that need none are read: most
// lines that reach here are not progress, and a guest pays for every
// look. open says the line holds a literal the host sends a line for
// wherever it is (fOpen); without one, only a step keyword in the form
// the host's confirm entries accept makes a record, as every update
// must come from a line the host would send.
func readRecord(s string, st *state, counted, keywords, open bool) (u sdk.Progress, ok bool) {
	t := recordText(s)
	if len(t) < 3 {
		return u, false
	}
	if !keywords {
		return recordNoKeyword(s, t, st)
	}
	if finishedMark(s) { // its own literal: the host sends it
		u.Percentage, u.Step = 100, finishedAfter(s)
		return u, true
	}
	if !open {
		if t[0] == '|' && t[len(t)-1] == '|' {
			// "| total_timesteps | 100096 |", as confirmed for "tep"
			m0 := len(st.metrics)
			if u, ok := tableRow(t, st); ok && u.Step != 0 && len(st.metrics) == m0 {
				return u, true
			}
			st.metrics = st.metrics[:m0]
			return sdk.Progress{}, false
		}
		n, m, ok := spacedCounter(t)
		if !ok {
			if n, ok := iterationKey(t); ok {
				// "training_iteration: 20" (Ray's result), as confirmed
				return sdk.Progress{Step: n, Phase: "train", Source: "generic"}, true
			}
			return startBanner(t)
		}
		u.Step, u.Total, u.Percentage, u.Phase, u.Source = n, m, pct(n, m), "train", "generic"
		kvAll(t, st)
		kvSpaced(t, st)
		return u, true
	}
	if u, ok := tableHeader(t, st); ok {
		return u, true
	}
	m0 := len(st.metrics) // metrics another reader found on this line stay
	if evalRecord(t) {
		return u, false
	}
	if finishedMark(s) {
		u.Percentage = 100 // the job is done; the source stays its bar's
		return u, true
	}
	switch {
	case hasAt(t, 0, "[Parallel(") || index(t, "]: Done") >= 0:
		return joblibLine(t)
	case index(t, "Trial ") >= 0:
		return trialLine(t)
	case index(t, "PROGRESS: at ") >= 0:
		return gensimLine(t)
	case t[0] == '|' && t[len(t)-1] == '|':
		return tableRow(t, st)
	}
	found := false
	if e, et, ex, n, m, ok := epochAny(t); ok {
		u.Epoch, u.EpochTotal, u.EpochExact, u.Step, u.Total, found = e, et, ex, n, m, true
	}
	if found && (u.Step != 0 || u.EpochTotal != 0 || u.EpochExact != 0) {
		// the epoch reader said it; a step may follow ("epoch: 1/100,
		// iter: 8/1313")
		if u.Step == 0 {
			if n, m, ok := spacedCounter(t); ok {
				u.Step, u.Total = n, m
			}
		}
	} else if e, et, n, ok := espnetEpoch(t); ok {
		u.Epoch, u.EpochTotal, u.Step, found = e, et, n, true
	} else if e, et, n, m, ok := bracketPairs(t); ok {
		u.Epoch, u.EpochTotal, u.Step, u.Total, found = e, et, n, m, true
	} else if n, end, ok := leadingCounter(t); ok {
		u.Step, found = n, true
		t = t[end:]
		valueNames(t, st)
	} else if n, m, ok := spacedCounter(t); ok {
		u.Step, u.Total, found = n, m, true
	}
	kvAll(t, st)
	if !found && hasLossLike(st.metrics[m0:]) {
		// "iterations:69, train loss:458.1", "built tree 3 of 100, train
		// score = 1.2": a count beside a training metric.
		if n, ok := colonCounter(t); ok {
			u.Step, found = n, true
		} else if n, m, ok := ofFraction(t); ok {
			u.Step, u.Total, found = n, m, true
		}
	}
	if found || counted {
		kvSpaced(t, st)
	}
	st.metrics = dedupe(st.metrics, m0)
	if !found && !counted && !hasLossLike(st.metrics[m0:]) {
		st.metrics = st.metrics[:m0]
		return u, false
	}
	if u.Total > 0 {
		u.Percentage = pct(u.Step, u.Total)
	} else if p, ok := percentKey(t); ok {
		u.Percentage = p // a record's own percentage key (structure.go)
	}
	u.Phase, u.Source = "train", "generic"
	return u, true
}

// recordText strips what pastes and loggers put before a record: "#> "
// (R's reprex), backticks, "> " quotes.
func recordText(s string) string {
	s = strings.TrimSpace(s)
	for len(s) > 0 {
		switch {
		case strings.HasPrefix(s, "#>"):
			s = strings.TrimSpace(s[2:])
		case s[0] == '`' || s[0] == '>':
			s = strings.TrimSpace(s[1:])
		default:
			return strings.TrimRight(s, "`")
		}
	}
	return s
}

// Three record shapes are data (package decl, the reader a rules file's
// templates use), tried where the record reader's structure reaches them:
// joblib's "[Parallel(n_jobs=8)]: Done   8 out of  10 | elapsed: 0.7s
// remaining: 0.1s" and "Done  36 tasks | elapsed" ("finished" ends the
// job; a count above its total is a racy report: declined), Optuna's
// "Trial 54 finished with value: 0.9" / "Trial 53 pruned." (the trial
// number is the step), gensim's "EPOCH 1 - PROGRESS: at 99.84% examples".
var (
	joblibShapes = compiled([]decl.Entry{
		{Name: "joblib", Phase: "process", Done: "finished", Match: []string{"Done {step} out of {total}"}},
		{Name: "joblib", Phase: "process", Done: "finished", Match: []string{"Done {step}"}},
	})
	trialShapes = compiled([]decl.Entry{
		{Name: "optuna", Phase: "train", Match: []string{"Trial {step} finished"}},
		{Name: "optuna", Phase: "train", Match: []string{"Trial {step} pru"}},
		{Name: "optuna", Phase: "train", Match: []string{"Trial {step} fail"}},
	})
	gensimShapes = compiled([]decl.Entry{
		{Name: "gensim", Phase: "train", Match: []string{"PROGRESS: at {percent}%"}, Optional: []string{"EPOCH {epoch}"}},
	})
)

func compiled(es []decl.Entry) []decl.Entry {
	for i := range es {
		if err := es[i].Compile(); err != nil {
			panic("progress: record shape " + es[i].Name + ": " + err.Error())
		}
	}
	return es
}

// readShapes reads t by the first of es that takes it.
func readShapes(es []decl.Entry, t string) (sdk.Progress, bool) {
	for i := range es {
		if u, _, ok := es[i].Read(t, nil); ok {
			return u, true
		}
	}
	return sdk.Progress{}, false
}

func joblibLine(t string) (sdk.Progress, bool) {
	if k := index(t, "Done"); k >= 0 && hasAt(t, skipSpaces(t, digitsEnd(t, skipSpaces(t, k+4))), "out of") {
		// a count past its total is declined, not read without the total
		return readShapes(joblibShapes[:1], t)
	}
	return readShapes(joblibShapes[1:], t)
}

// digitsEnd is the index of the first non-digit of t from i on.
func digitsEnd(t string, i int) int {
	for i < len(t) && isDigit(t[i]) {
		i++
	}
	return i
}

func trialLine(t string) (sdk.Progress, bool)  { return readShapes(trialShapes, t) }
func gensimLine(t string) (sdk.Progress, bool) { return readShapes(gensimShapes, t) }

// tableRow reads one "| name | value |" row of a key/value table
// (stable-baselines): timesteps are the step, the rest metrics.
func tableRow(t string, st *state) (u sdk.Progress, ok bool) {
	f := strings.Split(strings.Trim(t, "|"), "|")
	if len(f) != 2 {
		return u, false
	}
	name := strings.TrimSpace(f[0])
	if strings.ContainsAny(name, " \t") {
		return u, false
	}
	if k := strings.LastIndexByte(name, '/'); k >= 0 {
		name = name[k+1:] // "train/loss" rows under a "train/" heading
	}
	return kvPair(name, strings.TrimSpace(f[1]), st)
}

// kvPair reads one row of a name/value table.
func kvPair(name, value string, st *state) (u sdk.Progress, ok bool) {
	v, j, ok := parseNum(value, 0)
	if !ok || j != len(value) || name == "" || !isLetter(name[0]) {
		return u, false
	}
	switch name {
	case "total_timesteps", "total timesteps", "training_iteration":
		u.Step = toInt(v)
	case "fps", "iterations", "episodes", "n_updates", "nupdates", "serial_timesteps", "timestamp":
	default:
		if !strings.HasPrefix(name, "time_") { // time_elapsed, time_this_iter_s, time_total_s: clocks
			st.addMetric(name, v)
		}
	}
	if u.Step == 0 && len(st.metrics) == 0 {
		return u, false
	}
	u.Phase, u.Source = "train", "table"
	return u, true
}

// espnetEpoch reads ESPnet's "8epoch:train:376-750batch:" (epoch 8, step
// 750) and "8/20epoch started" (epoch 8 of 20).
func espnetEpoch(t string) (e, et, n int64, ok bool) {
	k := index(t, "epoch:train:")
	if k < 0 {
		if k = index(t, "epoch started"); k < 0 {
			return 0, 0, 0, false
		}
		b := k
		for b > 0 && (isDigit(t[b-1]) || t[b-1] == '/') {
			b--
		}
		e, j, ok := parseUint(t, b)
		if !ok {
			return 0, 0, 0, false
		}
		if j < k && t[j] == '/' {
			et, _, _ = parseUint(t, j+1)
		}
		return e, et, 0, true
	}
	b := k
	for b > 0 && isDigit(t[b-1]) {
		b--
	}
	e, _, ok = parseUint(t, b)
	if !ok {
		return 0, 0, 0, false
	}
	i := k + len("epoch:train:")
	if _, j, ok := parseUint(t, i); ok && j < len(t) && t[j] == '-' {
		n, _, _ = parseUint(t, j+1)
	}
	return e, 0, n, true
}

// bracketPairs reads "[e/E][i/N]", "[e][i/N]", "[e][i/N/G]" and
// "[train: e, i / N]".
func bracketPairs(t string) (e, et, n, m int64, ok bool) {
	if k := index(t, "[train: "); k >= 0 {
		e, j, ok := parseUint(t, k+8)
		if ok && j < len(t) && t[j] == ',' {
			if n, m, ok := spacedFrac(t, skipSpaces(t, j+1)); ok {
				return e, 0, n, m, true
			}
		}
	}
	for off := 0; off < len(t); {
		k := index(t[off:], "][")
		if k < 0 {
			return 0, 0, 0, 0, false
		}
		k += off
		off = k + 2
		b := strings.LastIndexByte(t[:k], '[')
		if b < 0 {
			continue
		}
		e, j, ok := parseUint(t, skipSpaces(t, b+1))
		if !ok {
			continue
		}
		j = skipSpaces(t, j)
		if j < k && t[j] == '/' {
			et, j, _ = parseUint(t, skipSpaces(t, j+1))
			j = skipSpaces(t, j)
		}
		if j != k {
			continue
		}
		n, m, ok := spacedFrac(t, skipSpaces(t, k+2))
		if !ok {
			continue
		}
		return e, et, n, m, true
	}
	return 0, 0, 0, 0, false
}

// spacedFrac reads "i / N" or "i/N" (a third "/G" may follow).
func spacedFrac(t string, i int) (n, m int64, ok bool) {
	n, j, ok := parseUint(t, i)
	if !ok {
		return 0, 0, false
	}
	j = skipSpaces(t, j)
	if j >= len(t) || t[j] != '/' {
		return 0, 0, false
	}
	m, _, ok = parseUint(t, skipSpaces(t, j+1))
	if !ok || m < n || m == 0 {
		return 0, 0, false
	}
	return n, m, true
}

// leadingCounter reads a record that starts with its round: "[30]:",
// "[2]\t", "45:\t", "4: " — followed by a "name: value" pair.
func leadingCounter(t string) (n int64, end int, ok bool) {
	i := 0
	br := t[0] == '['
	if br {
		i = 1
	}
	n, j, ok := parseUint(t, i)
	if !ok || j-i > 9 {
		return 0, 0, false
	}
	if br {
		if j >= len(t) || t[j] != ']' {
			return 0, 0, false
		}
		j++
		if j < len(t) && t[j] == ':' {
			j++
		}
	} else if j >= len(t) || t[j] != ':' {
		return 0, 0, false
	} else {
		j++
	}
	if j >= len(t) || t[j] != ' ' && t[j] != '\t' {
		return 0, 0, false
	}
	// the next field must be "name:value" (or "value, value avg loss").
	rest := strings.TrimSpace(t[j:])
	if rest == "" {
		return 0, 0, false
	}
	if isLetter(rest[0]) {
		if strings.IndexByte(rest, ':') < 0 && strings.IndexByte(rest, '=') < 0 {
			return 0, 0, false
		}
	} else if !(isDigit(rest[0]) && index(rest, "avg") > 0) {
		return 0, 0, false
	}
	return n, j, true
}

// spacedCounter reads "Iteration:  400 / 5000" and "iteration 34/ 10000":
// a step keyword, then a count over a total with spaces around the '/'.
func spacedCounter(t string) (n, m int64, ok bool) {
	for _, w := range []string{"Iteration", "iteration", "Iter", "iter", "Step", "step", "Batch", "batch"} {
		k := index(t, w)
		if k < 0 || k > 0 && isWordByte(t[k-1]) {
			continue
		}
		i := k + len(w)
		for i < len(t) && (t[i] == ':' || t[i] == ' ' || t[i] == '\t' || t[i] == '=') {
			i++
		}
		if n, m, ok := spacedFrac(t, i); ok {
			return n, m, true
		}
	}
	return 0, 0, false
}

// kvAll records every "name: value", "name=value" and "name : value"
// whose name is up to four words of letters, digits and _ ' - / . and
// whose value is a plain number (a unit after it makes it a time or a
// size, not a metric).
func kvAll(t string, st *state) {
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c != ':' && c != '=' {
			continue
		}
		a := skipSpaces(t, i+1)
		if a < len(t) && t[a] == '[' {
			a++ // "lr=[5e-05]": a one-element list
		}
		v, j, ok := parseNum(t, a)
		if !ok || j < len(t) && (isLetter(t[j]) || t[j] == ':' || t[j] == '/') {
			continue
		}
		name := kvName(t, i)
		if name != "" {
			st.addNew(name, v)
		}
		i = j - 1
	}
}

// kvName returns the name that ends at t[e] (a ':' or '='): words back to
// a separator (',', tab, '|', a bracket, two spaces, a number).
func kvName(t string, e int) string {
	end := e
	for end > 0 && t[end-1] == ' ' {
		end--
	}
	b, words := end, 0
	for b > 0 {
		c := t[b-1]
		if isLetter(c) || isDigit(c) || c == '_' || c == '\'' || c == '-' || c == '/' || c == '.' {
			b--
			continue
		}
		if c == ' ' && b >= 2 && t[b-2] != ' ' && words < 3 {
			// another word only if it starts with a letter
			a := b - 1
			for a > 0 && t[a-1] != ' ' && t[a-1] != '\t' && t[a-1] != ',' && t[a-1] != '|' {
				a--
			}
			if !isLetter(t[a]) || strings.ContainsAny(t[a:b-1], ":=[]()|,") {
				break
			}
			words++
			b--
			continue
		}
		break
	}
	name := strings.Trim(t[b:end], "-./'")
	if k := strings.LastIndexByte(name, ' '); k >= 0 && k+1 < len(name) && isDigit(name[k+1]) {
		// "learn 0.63passed:": the name is glued to the value before it
		w := name[k+1:]
		i := 0
		for i < len(w) && (isDigit(w[i]) || w[i] == '.') {
			i++
		}
		name = w[i:]
	}
	if name == "" || !isLetter(name[0]) && name[0] != '_' || len(name) > 48 {
		return ""
	}
	return name
}

// nonMetricWords are the parts of a name that make it a counter, a
// time, a size or a throughput rather than a metric.
var nonMetricWords = newWordSet("time", "eta", "mem", "wps", "ups", "wpb", "bsz", "/s", "sec", "speed", "fps", "elapsed",
	"remaining", "num_updates", "batch", "v_num", "gpu", "iter", "step", "epoch", "example", "token", "sample", "pid",
	"rank", "n_jobs", "chain", "trial", "line", "size", "seed", "total", "ms/", "data", "pass")

// nonMetric reports names that are counters, times, sizes or throughput
// (a name with "loss" in it is always a metric). No allocation: a guest
// pays for each.
func nonMetric(name string) bool {
	lm := letterMask(name)
	if lm&lmLoss == lmLoss && indexFold(name, "loss") >= 0 {
		return false
	}
	return structuralKey(name) || nonMetricWords.in(name, lm)
}

var lmLoss = letterMask("loss")

// hasLossLike reports a metric that reads as a training report (loss,
// accuracy, score, learning rate, reward), so that a line of settings
// alone is not progress.
func hasLossLike(ms []metric) bool {
	for _, m := range ms {
		if lossLikeWords.in(m.k, letterMask(m.k)) {
			return true
		}
	}
	return false
}

var lossLikeWords = newWordSet("loss", "acc", "lr", "learn", "score", "reward", "error", "auc", "rmse", "l2", "ppl", "perplex", "cost")

// evalRecord reports a record of an evaluation pass ("Test set: Average
// loss: 0.05", "Validation: ...", "| valid on 'valid' subset |"): not the
// training's progress.
func evalRecord(t string) bool {
	// after a logger's timestamp: "2019-02-19 18:37:13,162 TEST : loss"
	if len(t) > 24 && isDigit(t[0]) && t[4] == '-' {
		if k := strings.IndexByte(t[19:], ' '); k >= 0 {
			t = strings.TrimSpace(t[19+k:])
		}
	}
	return prefixFold(t, "test") || prefixFold(t, "eval") || prefixFold(t, "validat") ||
		prefixFold(t, "dev ") || prefixFold(t, "dev:") || index(t, "valid on ") >= 0 || index(t, "Test set") >= 0
}

// kvSpaced records "name value" pairs with no ':' or '=' between them
// ("lr 1.00e-03", "train_loss 2.75e-01 | lr 4.4e-05", "moving ave loss
// 78.02"), on a line whose counters are known: a name of up to three
// words of letters (and _ or digits after the first), the value a plain
// number followed by a separator.
func kvSpaced(t string, st *state) {
	for i := 1; i < len(t); i++ {
		if t[i-1] != ' ' || !(isDigit(t[i]) || t[i] == '-' && i+1 < len(t) && isDigit(t[i+1])) {
			continue
		}
		v, j, ok := parseNum(t, i)
		if !ok || !finite(v) || j < len(t) && !(t[j] == ' ' || t[j] == ',' || t[j] == '|' || t[j] == '(' || t[j] == '\t' || t[j] == ';') && !gluedKey(t, j) {
			continue
		}
		// the name: words before the value, back to a separator.
		e := i - 1
		for e > 0 && t[e-1] == ' ' {
			e--
		}
		b, words := e, 0
		for b > 0 && words < 3 {
			a := b
			for a > 0 && (isLetter(t[a-1]) || isDigit(t[a-1]) || t[a-1] == '_') {
				a--
			}
			if a == b || !isLetter(t[a]) {
				break
			}
			b, words = a, words+1
			if b < 2 || t[b-1] != ' ' || t[b-2] == ' ' || !isLetter(t[b-2]) && !isDigit(t[b-2]) {
				break
			}
			b-- // the space between two words
		}
		for b < e && t[b] == ' ' {
			b++
		}
		if words == 0 || b >= e {
			continue
		}
		name := t[b:e]
		if strings.IndexByte(name, ' ') >= 0 && !hasLossLike([]metric{{name, 0}}) {
			// several words make a name only when they end in a metric
			// word ("moving ave loss"); else take the last word.
			name = name[strings.LastIndexByte(name, ' ')+1:]
		}
		if len(name) >= 2 {
			st.addNew(name, v)
		}
		i = j
	}
}

// gluedKey reports the next record's "name:" glued to a value at t[j:]
// ("0.6356passed: 17.4 sec"): the value ends where the letters start.
func gluedKey(t string, j int) bool {
	k := j
	for k < len(t) && isLetter(t[k]) {
		k++
	}
	return k >= j+3 && k < len(t) && t[k] == ':'
}

// dedupe drops the metrics from m0 on whose name, folded (case, space
// = underscore), another reader or an earlier pair already gave.
func dedupe(ms []metric, m0 int) []metric {
	out := ms[:m0]
	for _, m := range ms[m0:] {
		if len(m.k) < 2 || stopWord(m.k) {
			continue
		}
		dup := false
		for _, o := range out {
			if sameKey(o.k, m.k) {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, m)
		}
	}
	return out
}

// sameKey compares metric names as the corpus does: ASCII case folded,
// a space the same as an underscore.
func sameKey(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if x == ' ' {
			x = '_'
		}
		if y == ' ' {
			y = '_'
		}
		if x != y && !(isLetter(x) && x|0x20 == y|0x20) {
			return false
		}
	}
	return true
}

// prefixFold reports whether s starts with the lowercase w, ignoring case.
func prefixFold(s, w string) bool {
	return len(s) >= len(w) && indexFold(s[:len(w)], w) == 0
}

func stopWord(k string) bool {
	switch strings.ToLower(k) {
	case "of", "at", "in", "on", "to", "is", "the", "and", "for", "out", "by", "with", "after", "from":
		return true
	}
	return false
}

// epochAny reads an epoch wherever a record prints one: "epoch = 0.703"
// (fractional), "Epoch... (47/116 | Loss: ...)", "epoch: 1/100,",
// "Epoch: 55/167 (996/1926)" (with the step of the epoch after it).
func epochAny(t string) (e, et int64, ex float64, n, m int64, ok bool) {
	for _, w := range []string{"epoch", "Epoch", "EPOCH"} {
		k := index(t, w)
		if k < 0 || k > 0 && (isLetter(t[k-1]) || t[k-1] == '_') {
			continue
		}
		i := k + len(w)
		if i < len(t) && isLetter(t[i]) {
			continue // "epochs": a setting
		}
		for i < len(t) && (t[i] == ' ' || t[i] == '.' || t[i] == ':' || t[i] == '=' || t[i] == '(' || t[i] == '[' || t[i] == '#') {
			i++
		}
		v, j, ok := parseNum(t, i)
		if !ok || v < 0 || v > 1e7 {
			continue
		}
		if j < len(t) && t[j] == '/' {
			if v != float64(int64(v)) {
				continue
			}
			tot, j2, ok := parseUint(t, j+1)
			if !ok || float64(tot) < v {
				continue
			}
			e, et = int64(v), tot
			j = skipSpaces(t, j2)
			if j < len(t) && (t[j] == '(' || t[j] == '[') {
				n, m, _ = spacedFrac(t, j+1)
			}
			return e, et, 0, n, m, true
		}
		if j < len(t) && (isLetter(t[j]) || t[j] == '%') {
			continue
		}
		if v != float64(int64(v)) {
			return int64(v) + 1, 0, v, 0, 0, true
		}
		// fairseq: "| epoch 011  3000 / 8223 loss=0.75": the step of the
		// epoch after its number.
		if k := skipSpaces(t, j); k > j && k < len(t) && isDigit(t[k]) {
			n, m, _ = spacedFrac(t, k)
		}
		return int64(v), 0, 0, n, m, true
	}
	return 0, 0, 0, 0, 0, false
}

// colonCounter reads "iterations:69," / "step: 12 |": a step word, a
// colon and the count, on a record of metrics.
func colonCounter(t string) (int64, bool) {
	for _, w := range []string{"iterations:", "iteration:", "Iteration:", "steps:", "step:", "Step:", "iter:", "Iter:"} {
		k := index(t, w)
		if k < 0 || k > 0 && isWordByte(t[k-1]) {
			continue
		}
		n, j, ok := parseUint(t, skipSpaces(t, k+len(w)))
		if ok && (j == len(t) || t[j] == ',' || t[j] == ' ' || t[j] == '|' || t[j] == '\t') {
			return n, true
		}
	}
	return 0, false
}

// ofFraction reads the first "N of M" in t.
func ofFraction(t string) (n, m int64, ok bool) {
	k := index(t, " of ")
	if k <= 0 || !isDigit(t[k-1]) {
		return 0, 0, false
	}
	b := k
	for b > 0 && isDigit(t[b-1]) {
		b--
	}
	n, _, _ = parseUint(t, b)
	m, _, ok = parseUint(t, k+4)
	if !ok || m < n || m == 0 {
		return 0, 0, false
	}
	return n, m, true
}

// recordNoKeyword reads the records that carry no step, epoch or loss
// keyword: end-of-job marks, joblib, Optuna, gensim, key/value table
// rows, and rounds that lead the line ("[2]  train-rmse:0.1", "45:\tlearn:").
func recordNoKeyword(s, t string, st *state) (u sdk.Progress, ok bool) {
	switch c := t[0]; {
	case c == '[' || isDigit(c):
		if hasAt(t, 0, "[Parallel(") {
			return joblibLine(t)
		}
		if index(t, "] Trial ") >= 0 {
			return trialLine(t)
		}
		if index(t, "[Info] Finish train") >= 0 {
			u.Percentage = 100
			return u, true
		}
		n, end, ok := leadingCounter(t)
		if !ok {
			return u, false
		}
		m0 := len(st.metrics)
		kvAll(t[end:], st)
		kvSpaced(t[end:], st) // "45:  learn 0.63passed: 17 sec" (old CatBoost)
		st.metrics = dedupe(st.metrics, m0)
		if len(st.metrics) == m0 && !valueNames(t[end:], st) {
			return u, false
		}
		u.Step, u.Phase, u.Source = n, "train", "generic"
		return u, true
	case c == '|' && t[len(t)-1] == '|':
		return tableRow(t, st)
	}
	if n, m, ok := ofFraction(t); ok {
		// "built tree 3 of 100, train score = 1.2": a count beside a
		// training metric
		m0 := len(st.metrics)
		kvAll(t, st)
		if hasLossLike(st.metrics[m0:]) {
			return sdk.Progress{Step: n, Total: m, Percentage: pct(n, m), Phase: "train", Source: "generic"}, true
		}
		st.metrics = st.metrics[:m0]
	}
	switch {
	case finishedMark(s):
		u.Percentage = 100 // the job is done; the source stays its bar's
		return u, true
	case index(t, "PROGRESS: at ") >= 0:
		return gensimLine(t)
	case (t[0] == 'E' || t[0] == 'e') && prefixFold(t, "episode") && len(t) > 8 && !isWordByte(t[7]):
		// "Episode: 74, Actions: 2162, reward: -19": an RL loop's episode
		// counter leading a record with a reward (no total printed)
		if n, end, ok := episodeLead(t); ok {
			m0 := len(st.metrics)
			kvAll(t[end:], st)
			st.metrics = dedupe(st.metrics, m0)
			for _, m := range st.metrics[m0:] {
				if strings.Contains(strings.ToLower(m.k), "reward") {
					return sdk.Progress{Step: n, Phase: "train", Source: "generic"}, true
				}
			}
			st.metrics = st.metrics[:m0]
		}
	case isLetter(t[0]) && index(t, "reward_mean: ") > 0:
		// a result dict's "episode_reward_mean: -544.68" (RLlib): one
		// name, one value, on a line of its own
		if k := strings.IndexByte(t, ':'); strings.IndexByte(t[:k], ' ') < 0 {
			m0 := len(st.metrics)
			kvAll(t, st)
			if len(st.metrics) == m0+1 {
				return sdk.Progress{Phase: "train", Source: "generic"}, true
			}
			st.metrics = st.metrics[:m0]
		}
	}
	return u, false
}

// addNew records a metric a record reader found, unless another reader
// (or an earlier pair) named it already, or the name is a counter, time,
// size or throughput. The duplicate check comes first: on a line another
// reader parsed, most names are its.
func (st *state) addNew(name string, v float64) {
	for _, m := range st.metrics {
		if sameKey(m.k, name) {
			return
		}
	}
	if stopWord(name) || nonMetric(name) {
		return
	}
	st.metrics = append(st.metrics, metric{name, v})
}

// startBanner reads the total of a trainer's start banner whose wording
// the MLX parser does not know: "Starting ORPO training..., iters: 500"
// ("iters: N" is what the host's confirm entry lets through).
func startBanner(t string) (u sdk.Progress, ok bool) {
	k := index(t, "Starting ")
	if k < 0 || index(t[k:], "training") < 0 {
		return u, false
	}
	i := index(t[k:], "iters:")
	if i < 0 || k+i > 0 && isWordByte(t[k+i-1]) {
		return u, false
	}
	n, _, ok := parseUint(t, skipSpaces(t, k+i+6))
	if !ok || n == 0 {
		return u, false
	}
	return sdk.Progress{Source: "mlx", Total: n, Phase: "train"}, true
}

// episodeLead reads the counter of "Episode: 74, ..." / "episode 3 | ...".
func episodeLead(t string) (n int64, end int, ok bool) {
	i := 7
	for i < len(t) && (t[i] == ' ' || t[i] == '\t' || t[i] == ':' || t[i] == '#') {
		i++
	}
	n, end, ok = parseUint(t, i)
	if !ok || end == len(t) || !(t[end] == ' ' || t[end] == '\t' || t[end] == ',' || t[end] == ';' || t[end] == '|') {
		return 0, 0, false
	}
	return n, end, true
}
