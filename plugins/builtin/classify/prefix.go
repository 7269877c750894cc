package classify

import (
	"strings"
)

var levels = map[string]byte{
	"WARNING": 'W', "WARN": 'W', "INFO": 'I', "DEBUG": 'I', "TRACE": 'I', "NOTICE": 'I',
	"ERROR": 'E', "CRITICAL": 'E', "FATAL": 'E', "ERR": 'E',
}

// stripPrefixes removes what loggers, launchers and pastes put in front of a
// line. It returns the rest with its indentation, the stream label and the
// log level ('W', 'I', 'E' or 0).
func stripPrefixes(s string) (string, string, byte) {
	var key string
	var level byte
	logged := false // a timestamp was seen: logger fields may follow
	for iter := 0; iter < 10; iter++ {
		t := strings.TrimLeft(s, " \t")
		if t == "" {
			return s, key, level
		}
		switch c := t[0]; {
		case c == '>':
			s = strings.TrimPrefix(t[1:], " ")
			continue
		case c == '[':
			if r, k, lv, ok := bracketPrefix(t, logged); ok {
				s, logged = r, logged || lv == 0 && k == ""
				if k != "" {
					key = k
				}
				if lv != 0 {
					level = lv
				}
				continue
			}
		case c == '|' && (len(t) == 1 || t[1] == ' ') && !strings.HasSuffix(strings.TrimRight(t, " \t"), "|"):
			s = t[1:] // Python 3.11 exception group nesting: "  | Traceback ..."
			continue
		case c == '+' && strings.HasPrefix(t, "+ Exception Group Traceback"):
			s = t[2:]
			continue
		case c == '(':
			if j := strings.IndexByte(t, ')'); j > 0 && j < 100 && (strings.Contains(t[:j], "pid=") || t[:j] == "(raylet") {
				key, s = t[1:j], t[j+1:]
				continue
			}
		case c == '#':
			if strings.HasPrefix(t, "##[error]") {
				s, level = t[9:], 'E'
				continue
			}
			if strings.HasPrefix(t, "##[warning]") {
				s, level = t[11:], 'W'
				continue
			}
		case isDigit(c):
			if n := timestampLen(t); n > 0 {
				s, logged = trimSeps(t[n:]), true
				continue
			}
			if j := strings.Index(t, ": "); j > 0 && j <= 4 && allDigits(t[:j]) {
				key, s = t[:j], t[j+2:]
				continue
			}
		case c == 'I' || c == 'W' || c == 'E' || c == 'F':
			if n := glogLen(t); n > 0 {
				s, level = t[n:], glogLevel(c)
				continue
			}
		}
		if r, lv, ok := levelPrefix(t, logged); ok {
			s, level = r, lv
			continue
		}
		if logged {
			if r, ok := loggerField(t); ok {
				s = r
				continue
			}
		}
		if r, k, ok := composePrefix(t); ok {
			s, key = r, k
			continue
		}
		return s, key, level
	}
	return s, key, level
}

func glogLevel(c byte) byte {
	switch c {
	case 'W':
		return 'W'
	case 'I':
		return 'I'
	}
	return 'E'
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return s != ""
}

// bracketPrefix handles "[rank0]:", "[default3]:", "[1,0]<stderr>:",
// "[2024-05-01 10:00:00,123]", "[INFO]", "[W socket.cpp:464]" and, after a
// timestamp, "[logger.name]".
func bracketPrefix(t string, logged bool) (string, string, byte, bool) {
	j := strings.IndexByte(t, ']')
	if j < 2 || j > 100 {
		return "", "", 0, false
	}
	inner, rest := t[1:j], t[j+1:]
	low := strings.ToLower(inner)
	for _, p := range []string{"rank", "default", "worker", "local_rank"} {
		if strings.HasPrefix(low, p) && allDigits(strings.TrimSpace(low[len(p):])) && strings.HasPrefix(rest, ":") {
			return rest[1:], strings.ReplaceAll(low, " ", ""), 0, true
		}
	}
	if c := strings.IndexByte(inner, ','); c > 0 && allDigits(inner[:c]) && allDigits(inner[c+1:]) {
		if k := strings.IndexByte(rest, ':'); k >= 0 && k < 10 {
			return rest[k+1:], inner, 0, true
		}
		return rest, inner, 0, true
	}
	if n := timestampLen(inner); n > 0 {
		return trimSeps(rest), "", 0, true
	}
	if lv, ok := levels[strings.TrimSpace(inner)]; ok {
		return trimSeps(rest), "", lv, true
	}
	if c := inner[0]; (c == 'W' || c == 'E' || c == 'I' || c == 'F') && len(inner) > 2 && (inner[1] == ' ' || isDigit(inner[1])) && hasLineSuffix(inner) {
		return rest, "", glogLevel(c), true
	}
	if logged && !strings.ContainsAny(inner, " \t") && len(inner) <= 60 {
		return trimSeps(rest), "", 0, true
	}
	return "", "", 0, false
}

// hasLineSuffix reports whether s ends in ":<digits>" (file.cc:123).
func hasLineSuffix(s string) bool {
	i := strings.LastIndexByte(s, ':')
	return i > 0 && allDigits(s[i+1:])
}

func trimSeps(s string) string {
	s = strings.TrimLeft(s, " \t:|-,")
	return s
}

// timestampLen returns the length of a leading date/time stamp such as
// "2024-05-01 10:00:00,123", "2024-05-01T10:00:00.123456Z", "10:00:00.5".
// monthDay matches "MM-DD " followed by a time's first digit.
func monthDay(t string) bool {
	return len(t) > 6 && isDigit(t[0]) && isDigit(t[1]) && t[2] == '-' && isDigit(t[3]) && isDigit(t[4]) && t[5] == ' ' && isDigit(t[6])
}

func timestampLen(t string) int {
	i := 0
	digits := func(n int) bool {
		if i+n > len(t) {
			return false
		}
		for k := 0; k < n; k++ {
			if !isDigit(t[i+k]) {
				return false
			}
		}
		i += n
		return true
	}
	date := false
	if digits(4) && i < len(t) && (t[i] == '-' || t[i] == '/') {
		i++
		if !digits(2) || i >= len(t) || (t[i] != '-' && t[i] != '/') {
			return 0
		}
		i++
		if !digits(2) {
			return 0
		}
		date = true
		if i < len(t) && (t[i] == 'T' || t[i] == ' ') && i+1 < len(t) && isDigit(t[i+1]) {
			i++
		} else {
			return i
		}
	} else if monthDay(t) {
		i, date = 6, true // vLLM's "12-25 01:10:28": month-day without a year
	} else {
		i = 0
	}
	start := i
	if !digits(2) || i >= len(t) || t[i] != ':' {
		if date {
			return start - 1
		}
		return 0
	}
	i++
	if !digits(2) {
		return 0
	}
	if i < len(t) && t[i] == ':' {
		i++
		if !digits(2) {
			return 0
		}
	}
	if i < len(t) && (t[i] == '.' || t[i] == ',') {
		i++
		for i < len(t) && isDigit(t[i]) {
			i++
		}
	}
	if i < len(t) && t[i] == 'Z' {
		i++
	} else if i+5 <= len(t) && (t[i] == '+' || t[i] == '-') && isDigit(t[i+1]) && isDigit(t[i+2]) {
		i += 3
		if i < len(t) && t[i] == ':' {
			i++
		}
		for k := 0; k < 2 && i < len(t) && isDigit(t[i]); k++ {
			i++
		}
	}
	if i < len(t) && isLetter(t[i]) {
		return 0
	}
	return i
}

// glogLen matches glog/absl/c10 prefixes: "E0101 12:00:00.123456 1234 file.cc:12] "
// and TensorFlow's "W tensorflow/core/x.cc:479] ".
func glogLen(t string) int {
	if len(t) < 4 || !(t[1] == ' ' || isDigit(t[1])) {
		return 0
	}
	j := strings.Index(t, "] ")
	if j < 0 || j > 160 || !hasLineSuffix(t[:j]) {
		return 0
	}
	return j + 2
}

// levelPrefix strips "WARNING:", "ERROR -", "INFO ", "WARNING:root:".
func levelPrefix(t string, logged bool) (string, byte, bool) {
	j := 0
	for j < len(t) && 'A' <= t[j] && t[j] <= 'Z' {
		j++
	}
	lv, ok := levels[t[:j]]
	if !ok || j == len(t) {
		return "", 0, false
	}
	rest := t[j:]
	switch {
	case rest[0] == ':':
		rest = rest[1:]
		if rest != "" && rest[0] != ' ' {
			if k := strings.IndexByte(rest, ':'); k > 0 && !strings.ContainsAny(rest[:k], " \t") {
				rest = rest[k+1:] // WARNING:root:message
			}
		}
	case rest[0] == ' ' || rest[0] == '|' || rest[0] == '-' || rest[0] == ']':
		if !logged && rest[0] == ' ' && !strings.HasPrefix(strings.TrimLeft(rest, " "), "-") && !strings.HasPrefix(strings.TrimLeft(rest, " "), "|") && t[:j] != "WARNING" && t[:j] != "ERROR" {
			return "", 0, false
		}
	default:
		return "", 0, false
	}
	return trimSeps(rest), lv, true
}

// loggerField strips one "name - " or "name | " field after a timestamp, as
// in "root - ERROR - msg" or loguru's "__main__:main:12 - msg".
func loggerField(t string) (string, bool) {
	// "multiproc_worker_utils.py:229]": the source location vLLM's and
	// glog-like loggers put after the time.
	if k := strings.IndexByte(t, ']'); k > 0 && k <= 60 && !strings.ContainsAny(t[:k], " \t[") {
		if c := strings.LastIndexByte(t[:k], ':'); c > 0 && allDigits(t[c+1:k]) {
			return t[k+1:], true
		}
	}
	for _, sep := range []string{" - ", " | "} {
		if k := strings.Index(t, sep); k > 0 && k <= 60 && !strings.ContainsAny(t[:k], " \t") {
			return t[k+len(sep):], true
		}
	}
	return "", false
}

// composePrefix strips docker compose's "service-1  | ".
func composePrefix(t string) (string, string, bool) {
	k := strings.Index(t, " |")
	if k <= 0 || k > 60 || strings.ContainsAny(strings.TrimRight(t[:k], " "), " \t:") {
		return "", "", false
	}
	name := strings.TrimRight(t[:k], " ")
	if k+2 < len(t) && t[k+2] != ' ' {
		return "", "", false
	}
	sep := false // compose names carry an index: "trainer-1", "app_1"
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(isLetter(c) || isDigit(c) || c == '-' || c == '_' || c == '.') {
			return "", "", false
		}
		sep = sep || c == '-' || c == '_'
	}
	if !sep {
		return "", "", false
	}
	return strings.TrimPrefix(t[k+2:], " "), name, true
}
