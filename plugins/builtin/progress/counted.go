package progress

import "github.com/runbox/runbox/sdk"

// Counts written before their word, and bars drawn with '#' (Chainer's
// ProgressBar extension, which ESPnet and others print, and hand-written
// loggers of the same shape):
//
//	this epoch [#####.............................................] 10.84%
//	     91300 iter, 7 epoch / 20 epochs
//
// countedEpoch reads "N iter, E epoch / T epochs": the step, and the
// epoch of a total, each count before its word.
func countedEpoch(s string, u *sdk.Progress) bool {
	k := index(s, " epoch / ")
	if k <= 0 || !isDigit(s[k-1]) {
		return false
	}
	b := k - digitsBefore(s, k)
	e, _, ok1 := parseUint(s, b)
	t, j, ok2 := parseUint(s, k+len(" epoch / "))
	if !ok1 || !ok2 || t == 0 || e > t || !hasAt(s, j, " epoch") || b > 0 && !isSpace(s[b-1]) {
		return false
	}
	// the count of steps before it, "91300 iter, ": without one, "3
	// epoch / 40 epochs" may be prose about a setting
	n, j, ok := parseUint(s, skipSpaces(s, 0))
	if !ok || j >= b || !hasAt(s, j, " iter") && !hasAt(s, j, " step") {
		return false
	}
	u.Step, u.Epoch, u.EpochTotal = n, e, t
	return true
}

// hashBar reads the percentage after a bar of '#' and '.' in brackets:
// "[#####.......] 10.84%" (ten cells or more).
func hashBar(s string) (float64, bool) {
	k := indexByte(s, '[')
	if k < 0 {
		return 0, false
	}
	i := k + 1
	for i < len(s) && (s[i] == '#' || s[i] == '.') {
		i++
	}
	if i-k-1 < 10 || i >= len(s) || s[i] != ']' {
		return 0, false
	}
	v, j, ok := parseNum(s, skipSpaces(s, i+1))
	if !ok || j >= len(s) || s[j] != '%' || v < 0 || v > 100 {
		return 0, false
	}
	return v, true
}

// countedWords reads counts written before "epoch" and "iter" in a list
// of counts (each a whole singular word, then a comma or the end):
// "000 epoch, 06000 iter, average time 0.66, loss 37.2" (zero-padded, as
// printf's %03d writes them). Plural words are settings ("20 epochs").
func countedWords(s string, u *sdk.Progress) bool {
	found := false
	for _, w := range [...]string{" epoch", " iter", " iteration"} {
		for off := 0; off < len(s); {
			k := index(s[off:], w)
			if k < 0 {
				break
			}
			k += off
			off = k + len(w)
			if k == 0 || !isDigit(s[k-1]) || off < len(s) && s[off] != ',' {
				continue
			}
			b := k - digitsBefore(s, k)
			if b > 0 && s[b-1] != ' ' && s[b-1] != ',' {
				continue
			}
			n, _, ok := parseUint(s, b)
			if !ok {
				continue
			}
			if w == " epoch" {
				u.Epoch = n
			} else {
				u.Step = n
			}
			found = true
			break
		}
	}
	return found
}
