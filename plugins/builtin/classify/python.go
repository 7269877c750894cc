package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

func matchSyntax(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	typ := sc.excType(i)
	if !(strings.HasPrefix(lc, "syntaxerror") || strings.HasPrefix(lc, "indentationerror") || strings.HasPrefix(lc, "taberror") ||
		sc.roles[i] == roleExc && has(typ, "SyntaxError", "IndentationError", "TabError")) {
		return false
	}
	if typ == "" {
		typ, _, _ = parseException(l.text, false)
	}
	c := cand{code: sdk.CodeSyntaxError, conf: 0.95, details: map[string]string{"exception": typ}}
	msg := l.text
	if k := strings.Index(msg, ": "); k >= 0 {
		msg = msg[k+2:]
	}
	c.details["message"] = clip(msg, 200)
	where := ""
	if t := sc.tbOf[i]; t >= 0 && sc.tbs[t].frame.file != "" {
		f := sc.tbs[t].frame
		c.details["file"], c.details["line"] = f.file, f.line
		where = " in " + f.file
		if f.line != "" {
			where += " line " + f.line
		}
	}
	c.msg = typ + where + ": " + clip(msg, 200)
	c.sugg = []string{"Fix the code at the line shown (the error can be on the line just before the caret, e.g. an unclosed bracket)."}
	switch {
	case strings.Contains(lc, "missing parentheses in call to 'print'") || strings.Contains(lc, "missing parentheses in call to 'exec'"):
		c.sugg = append(c.sugg, "This is Python 2 code: port it to Python 3 (print(...)) or run it with a Python 2 interpreter.")
	case typ == "TabError" || strings.Contains(lc, "inconsistent use of tabs"):
		c.sugg = append(c.sugg, "The file mixes tabs and spaces: convert indentation to spaces (e.g. `expand -t 4`, or your editor's \"convert indentation\").")
	case strings.Contains(lc, "non-utf-8 code"):
		c.sugg = append(c.sugg, "Save the file as UTF-8, or declare its encoding in the first line (`# -*- coding: latin-1 -*-`).")
	case strings.HasSuffix(c.details["file"], ".sh") || strings.HasSuffix(c.details["file"], ".json") || strings.HasSuffix(c.details["file"], ".yaml"):
		c.sugg = append(c.sugg, "That file is not Python: run it with the right program (`bash x.sh`), not `python`.")
	default:
		c.sugg = append(c.sugg, "If the syntax is valid in newer Python (match, :=, f-strings, type hints like list[int]), check `python --version`: the interpreter may be too old.")
	}
	sc.add(i, c)
	return true
}

// addGeneric explains the traceback that ended the program when no line in
// it named a specific cause, and the launcher wrapper when nothing else is
// left.
func (sc *scanner) addGeneric() {
	sc.orphanCaret()
	sc.cutTraceback()
	group, _ := sc.primary()
	if group >= 0 {
		root, outer := -1, -1
		for k := range sc.tbs {
			t := &sc.tbs[k]
			if t.group != group || t.exc < 0 || t.wrapper {
				continue
			}
			if root < 0 || t.cause > sc.tbs[root].cause {
				root = k
			}
			if outer < 0 || t.cause < sc.tbs[outer].cause {
				outer = k
			}
		}
		c := sc.genericCand(root, outer)
		c.tier = tierGeneric
		sc.cands = append(sc.cands, c)
		return
	}
	for k := len(sc.tbs) - 1; k >= 0; k-- {
		t := &sc.tbs[k]
		if t.exc < 0 {
			continue
		}
		c := sc.genericCand(k, k)
		c.tier = tierWeak
		if t.wrapper {
			c = sc.wrapperCand(k)
			c.tier = tierGeneric
		} else if !t.weak {
			continue
		}
		sc.cands = append(sc.cands, c)
		return
	}
}

func (sc *scanner) genericCand(root, outer int) cand {
	t := &sc.tbs[root]
	typ := t.typ
	short := typ
	if k := strings.LastIndexByte(short, '.'); k >= 0 {
		short = short[k+1:]
	}
	d := map[string]string{"exception": typ}
	if t.msg != "" {
		d["message"] = clip(t.msg, 300)
	}
	msg, lm := "The program raised "+typ, strings.ToLower(t.msg)
	if inner := quotedError(t.msg); inner != "" {
		// A re-raised worker error quotes the worker's traceback: its last
		// line is the error itself.
		d["inner_exception"] = inner
		msg += " carrying another process's traceback, which ended in " + clip(inner, 200)
		if it, im, ok := parseException(inner, true); ok {
			short, lm = it[strings.LastIndexByte(it, '.')+1:], strings.ToLower(im) // advise on the root
		}
	} else if t.msg != "" {
		msg += ": " + clip(t.msg, 200)
	}
	f := t.user
	if f.file == "" {
		f = t.frame
	}
	if f.file != "" && f.line != "" {
		d["file"], d["line"] = f.file, f.line
		msg += " (at " + f.file + ":" + f.line
		if f.fn != "" {
			d["function"] = f.fn
			msg += " in " + f.fn
		}
		msg += ")"
	}
	ev := []int{}
	if outer != root && outer >= 0 {
		d["wrapper_exception"] = sc.tbs[outer].typ
		msg += ", which surfaced as " + sc.tbs[outer].typ
		ev = append(ev, sc.tbs[outer].exc)
	}
	return cand{
		code: sdk.CodePythonException, conf: 0.85, at: t.exc, rank: codeRank[sdk.CodePythonException],
		msg: msg + ".", sugg: exceptionSuggestions(short, lm), details: d, ev: ev,
	}
}

// quotedError finds the exception line at the end of a traceback quoted as
// an escaped string inside msg ("'Traceback (most recent call
// last):\n  File ...\nKeyError: \'height\'\n'"), unescaped; "" if
// msg quotes none.
func quotedError(msg string) string {
	if !strings.Contains(msg, "Traceback (most recent call last)") {
		return ""
	}
	parts := strings.Split(msg, `\n`)
	for k := len(parts) - 1; k > 0; k-- {
		p := strings.ReplaceAll(strings.TrimSpace(parts[k]), `\'`, "'")
		if _, _, ok := parseException(p, true); ok {
			return p
		}
	}
	return ""
}

// wrapperCand explains a launcher wrapper whose child left no error of its own.
func (sc *scanner) wrapperCand(k int) cand {
	t := &sc.tbs[k]
	c := sc.genericCand(k, k)
	c.rank = 10
	if strings.HasSuffix(t.typ, "ChildFailedError") {
		c.code, c.conf = sdk.CodeDistributedError, 0.6
		c.msg = "A distributed worker failed (torch.distributed ChildFailedError) and its own error is not in the captured output."
		c.sugg = []string{
			"Look at the failing rank's log (the box names the rank, host and exit code); with torchrun, decorate main with @record (torch.distributed.elastic.multiprocessing.errors) to get its traceback.",
			"Rerun on a single GPU (python train.py) to see the error directly.",
		}
		c.details["kind"] = "child_failed"
	} else if strings.HasSuffix(t.typ, "CalledProcessError") {
		// The wrapper only relays the child's status: with the child's own
		// error out of sight, all that is known is a non-zero exit (a
		// signal in the status is matched as text elsewhere and wins).
		c.code, c.conf = sdk.CodeNonzeroExit, 0.5
		c.msg = "A subprocess the program started failed: " + clip(t.msg, 200) + " Its own error is not in the captured output."
		c.sugg = []string{"Run the subprocess command by itself to see its error (accelerate/deepspeed launchers print the child's traceback above this one)."}
		c.details["kind"] = "subprocess"
		if st := childStatus(sc.lines, t.exc); st != "" {
			c.details["child_exit_code"] = st
		}
		if cmd := childCommand(t.msg); cmd != "" {
			c.details["child_command"] = cmd
			c.sugg[0] = "Run the child by itself to see its error: `" + clip(cmd, 200) + "` (accelerate/deepspeed launchers print the child's traceback above this one)."
		}
	}
	return c
}

// childCommand turns CalledProcessError's "Command '['python', 'train.py',
// '--bs', '8']' returned ..." into the command line `python train.py --bs
// 8`; "" when the list is not all there (a narrow paste wraps it).
func childCommand(msg string) string {
	const p = "Command '["
	k := strings.Index(msg, p)
	if k < 0 {
		return ""
	}
	rest := msg[k+len(p):]
	end := strings.Index(rest, "]'")
	if end < 0 {
		return ""
	}
	var args []string
	for _, a := range strings.Split(rest[:end], ", ") {
		if len(a) < 2 || a[0] != '\'' || a[len(a)-1] != '\'' {
			return ""
		}
		a = strings.ReplaceAll(a[1:len(a)-1], `\\`, `\`)
		if a == "" || strings.ContainsAny(a, " \t\"'") {
			a = shellQuote(a)
		}
		args = append(args, a)
	}
	return strings.Join(args, " ")
}

// shellQuote quotes one argument for a POSIX shell.
func shellQuote(a string) string {
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// childStatus reads "returned non-zero exit status N" from the wrapper's
// message, which a narrow paste may wrap onto the next lines.
func childStatus(lines []line, at int) string {
	const p = "exit status"
	var b strings.Builder
	for i := at; i < len(lines) && i < at+4; i++ {
		b.WriteString(lines[i].lc)
		b.WriteByte(' ')
	}
	s := b.String()
	k := strings.LastIndex(s, p)
	if k < 0 {
		return ""
	}
	rest := strings.TrimLeft(s[k+len(p):], " \n")
	j := 0
	for j < len(rest) && (isDigit(rest[j]) || j == 0 && rest[j] == '-') {
		j++
	}
	if j == 0 || rest[:j] == "-" {
		return ""
	}
	return rest[:j]
}

func exceptionSuggestions(short, lm string) []string {
	switch {
	case short == "UnpicklingError" && strings.Contains(lm, "invalid load key, 'v'"):
		return []string{"The checkpoint is a Git LFS pointer, not the real file: run `git lfs pull` (or download the file again)."}
	case strings.Contains(lm, "headertoolarge") || strings.Contains(lm, "failed finding central directory") || strings.Contains(lm, "pytorchstreamreader failed"):
		return []string{"The checkpoint file is truncated or not a checkpoint (e.g. a Git LFS pointer or an HTML error page): download it again and check its size."}
	case strings.Contains(lm, "too many open files"):
		return []string{"Raise the open-file limit (`ulimit -n 65535`) or, with PyTorch DataLoader, use torch.multiprocessing.set_sharing_strategy('file_system')."}
	case short == "KeyError":
		return []string{"A dictionary/DataFrame/dataset lookup used a key that is not there: print the available keys (or columns) and check spelling and config values."}
	case short == "AttributeError" && strings.Contains(lm, "'nonetype'"):
		return []string{"Something returned None where an object was expected (e.g. cv2.imread on a missing file, a function without return): check the value named in the message."}
	case short == "AttributeError":
		return []string{"The object lacks that attribute: often an API changed between library versions — check the installed version against the code's requirements."}
	case short == "RecursionError":
		return []string{"Infinite recursion: check the base case; raising sys.setrecursionlimit only helps for deep but finite recursion."}
	case short == "UnicodeDecodeError":
		return []string{"Open the file with the right encoding (open(path, encoding='utf-8', errors='replace')) or check it is a text file."}
	case short == "JSONDecodeError":
		return []string{"The input is not valid JSON (empty file, HTML error page, or JSON Lines read as JSON): inspect it."}
	case short == "ZeroDivisionError":
		return []string{"A denominator was zero — often an empty dataset or a zero-length batch: check the data size."}
	case short == "IndexError":
		return []string{"An index was out of range — often an empty list/dataset or an off-by-one: check the lengths involved."}
	case short == "AssertionError":
		return []string{"An assert in the code failed: read the assert at the location shown for the condition it expects."}
	case short == "NotImplementedError":
		return []string{"A method was not implemented for this configuration: the option/model/backend combination is not supported by this version."}
	case short == "TypeError" || short == "ValueError":
		return []string{"Check the arguments at the location shown: a wrong type, value or API change between library versions is likely."}
	}
	return []string{"Read the traceback from the bottom up: the last frame in your own code is where to start."}
}

var gateSyntax = []string{"syntaxerror", "indentationerror", "taberror"}

// orphanCaret: `File "x.py", line N`, the source line and a caret under
// it, with no traceback around them and no exception line after (the
// tail was cut, or the error line went elsewhere): how Python reports a
// SyntaxError. A guess, below every error the output names.
func (sc *scanner) orphanCaret() {
	i := sc.caretAt
	if i <= 0 {
		return
	}
	for k := range sc.tbs {
		if sc.tbs[k].exc > i-3 {
			return // an exception line follows: it says what went wrong
		}
	}
	f := sc.file
	sc.cands = append(sc.cands, cand{
		code: sdk.CodeSyntaxError, conf: 0.45, at: i - 1, tier: tierGeneric, rank: codeRank[sdk.CodeSyntaxError],
		msg:     "Python pointed at " + f.file + ":" + f.line + " with a caret and no traceback: most likely a SyntaxError there (its message is not in the output).",
		sugg:    []string{"Run `python -m py_compile " + f.file + "` to see the syntax error; check the Python version the syntax needs (f-string nesting, match statements, walrus)."},
		details: map[string]string{"file": f.file, "line": f.line},
	})
}
