// Package tables knows the shapes of a column table's lines: a header of
// names, rows of bare numbers under it; and of a name/value table's rows. The host's prefilter
// (prefilter.Rows) and the progress plugin that reads the rows check the
// same shapes; the plugin is a guest, so this package needs only strings.
package tables

import "strings"

// Header reports whether line may be a column table's header: at
// least three names, none a number or starting with a digit, with no
// "key: value", '=', '|' or brackets, aligned (two names apart by two
// spaces or a tab: prose has single spaces).
func Header(line string) bool {
	t := strings.TrimSpace(TrimEscText(line))
	if len(t) < 5 || !(isLetter(t[0]) || t[0] == '#') || strings.ContainsAny(t, ":=|[]{}%,;") {
		return false
	}
	n, aligned := 0, false
	for i := 0; i < len(t); {
		j := i
		for j < len(t) && !isBlank(t[j]) {
			j++
		}
		c := t[i]
		if c >= '0' && c <= '9' || c == '-' || c == '+' || c == '.' {
			return false
		}
		n++
		k := j
		for k < len(t) && isBlank(t[k]) {
			k++
		}
		if k < len(t) && (k-j >= 2 || t[j] == '\t') {
			aligned = true
		}
		i = k
	}
	return n >= 3 && aligned
}

// Row reports whether line may be a row of a column table: at least
// two cells that are numbers, no fewer numbers and missing values than
// other cells ("7.89m", "h" may sit among them), the first a number or a
// missing value
// ("unknown", "n/a": a row that starts with a word is labelled, "all",
// "val", as an evaluation's summary is), and no ':' or '=' (a record of
// "key: value" pairs is read as one).
func Row(line string) bool {
	t := TrimEscText(line)
	if strings.ContainsAny(t, ":=") {
		return false
	}
	nums, missing, other := 0, 0, 0
	for i := 0; i < len(t); {
		for i < len(t) && isBlank(t[i]) {
			i++
		}
		j := i
		for j < len(t) && !isBlank(t[j]) {
			j++
		}
		if i == j {
			break
		}
		c := t[i:j]
		switch {
		case IsNumber(c):
			nums++
		case Missing(c):
			missing++
		case nums+missing+other == 0:
			return false
		default:
			other++
		}
		i = j
	}
	return nums >= 2 && nums+missing >= other
}

// Missing reports a cell that stands for a value not known yet.
func Missing(c string) bool {
	switch strings.ToLower(c) {
	case "unknown", "n/a", "na", "none", "null", "-", "--":
		return true
	}
	return false
}

// IsNumber reports whether s is a whole decimal number: [+-]digits
// [.digits][e[+-]digits], or nan or inf (a healthy run prints them too).
func IsNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		i++
	}
	switch strings.ToLower(s[i:]) {
	case "nan", "inf", "infinity":
		return true
	}
	d := 0
	for i < len(s) && isDigit(s[i]) {
		i, d = i+1, d+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i, d = i+1, d+1
		}
	}
	if d == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		e := i
		for i < len(s) && isDigit(s[i]) {
			i++
		}
		if i == e {
			return false
		}
	}
	return i == len(s)
}

// TrimEscText removes the escape sequences at the start of line that a
// paste printed as text ("ESC[J", "ESC[4A": the ESC byte written out),
// as a terminal would have drawn the line.
func TrimEscText(line string) string {
	for strings.HasPrefix(line, "ESC[") {
		i := 4
		for i < len(line) && (isDigit(line[i]) || line[i] == ';') {
			i++
		}
		if i >= len(line) || !isLetter(line[i]) {
			break
		}
		line = line[i+1:]
	}
	return line
}

func isDigit(c byte) bool  { return c >= '0' && c <= '9' }
func isLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }
func isBlank(c byte) bool  { return c == ' ' || c == '\t' }

// KVRow reports a row of a name/value table, one metric a line, drawn
// with pipes (stable-baselines' logger, many RL loggers) or in a box
// (rich tables, Ray's result box), and returns its name and value:
//
//	|    policy_entropy       | 3.34        |
//	│ training_iteration                   20 │
//
// The value may be missing ("nan", "unknown").
func KVRow(line string) (name, value string, ok bool) {
	t := strings.TrimSpace(line)
	if inner, ok := strings.CutPrefix(t, box); ok {
		inner, ok = strings.CutSuffix(inner, box)
		f := strings.Fields(inner)
		if !ok || len(f) != 2 {
			return "", "", false
		}
		name, value = f[0], f[1]
	} else {
		if len(t) < 5 || t[0] != '|' || t[len(t)-1] != '|' {
			return "", "", false
		}
		var two bool
		name, value, two = strings.Cut(t[1:len(t)-1], "|")
		if !two || strings.IndexByte(value, '|') >= 0 {
			return "", "", false
		}
		name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	}
	if name == "" || !isLetter(name[0]) || strings.ContainsAny(name, " \t") || !IsNumber(value) && !Missing(value) {
		return "", "", false
	}
	return name, value, true
}

// box is the vertical line a box-drawn table is drawn with.
const box = "\u2502"

// PipeHeader reports the header of a table drawn with pipes, three names
// or more, none a number ("| Trial name | status | iter | reward |").
func PipeHeader(line string) bool {
	cells, ok := pipeCells(line)
	if !ok || len(cells) < 3 {
		return false
	}
	for _, c := range cells {
		if c == "" || !isLetter(c[0]) && c[0] != '#' {
			return false // a separator ("|----+----|"), a number, a blank
		}
	}
	return true
}

// PipeRow reports a row of a table drawn with pipes: three cells or more,
// one a number at least; text cells may sit among them ("| trial_1 |
// RUNNING | 66 | -1105.85 |").
func PipeRow(line string) bool {
	cells, ok := pipeCells(line)
	if !ok || len(cells) < 3 {
		return false
	}
	for _, c := range cells {
		if IsNumber(c) {
			return true
		}
	}
	return false
}

// PipeCells returns the cells of a line drawn with pipes, trimmed.
func PipeCells(line string) []string {
	cells, _ := pipeCells(line)
	return cells
}

func pipeCells(line string) ([]string, bool) {
	t := strings.TrimSpace(line)
	if len(t) < 5 || t[0] != '|' || t[len(t)-1] != '|' {
		return nil, false
	}
	cells := strings.Split(t[1:len(t)-1], "|")
	for i := range cells {
		cells[i] = strings.TrimSpace(cells[i])
	}
	return cells, true
}
