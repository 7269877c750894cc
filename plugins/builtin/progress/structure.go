package progress

// The generic structure reader (issue #24) is the format table's last
// entry, "record": it reads progress in lines that no named format
// accepts, by their shape alone (record.go: counters with a total beside
// a progress word, key/value and JSON/dict records with metric-like keys,
// table rows, end-of-run lines; and here, a percentage key). Named
// formats run before it and refine it: the keyword reader and the
// MMCV/detectron2 readers ask it to fill what they left unknown.

// percentKeys are the keys whose value is the run's percentage when a
// record carries one ("progress": 42.1, percent=40, 'pct': 12.5).
var percentKeys = []string{"progress", "percent", "percentage", "pct"}

// percentKey reads a percentage key of a key/value or JSON/dict record:
// the key as a word (not "in_progress_count"), an optional closing quote,
// ':' or '=', an optional opening quote, a number in [0, 100] and an
// optional '%'. A fraction in [0, 1] is not read: 0.5 may be half or
// half a percent.
func percentKey(t string) (float64, bool) {
	v, _, ok := percentKeyNamed(t)
	return v, ok
}

// percentKeyNamed is percentKey with the key as the record spells it.
func percentKeyNamed(t string) (float64, string, bool) {
	for _, k := range percentKeys {
		from := 0
		for from < len(t) {
			i := indexFold(t[from:], k)
			if i < 0 {
				break
			}
			i += from
			from = i + len(k)
			if i > 0 && keyByteAt(t, i-1) || from < len(t) && keyByteAt(t, from) {
				continue // part of a longer name
			}
			j := from
			if j < len(t) && (t[j] == '"' || t[j] == '\'') {
				j++
			}
			for j < len(t) && (t[j] == ' ' || t[j] == '\t') {
				j++
			}
			if j >= len(t) || t[j] != ':' && t[j] != '=' {
				continue
			}
			j++
			for j < len(t) && (t[j] == ' ' || t[j] == '\t' || t[j] == '"' || t[j] == '\'') {
				j++
			}
			if j >= len(t) || !isDigit(t[j]) {
				continue
			}
			v, end, ok := parseNum(t, j)
			if !ok || v < 0 || v > 100 || v <= 1 && (end >= len(t) || t[end] != '%') {
				continue
			}
			return v, t[i : i+len(k)], true
		}
	}
	return 0, "", false
}

// keyByteAt reports a byte of a key name at s[i]: a letter, digit or _.
func keyByteAt(s string, i int) bool {
	c := s[i]
	return c == '_' || isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// dropMetric removes the line's metrics named k (a key another reader
// took for a metric that the structure reader knows is not one).
func (st *state) dropMetric(k string) {
	out := st.metrics[:0]
	for _, m := range st.metrics {
		if m.k != k {
			out = append(out, m)
		}
	}
	st.metrics = out
}
