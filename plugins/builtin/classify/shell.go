package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// bashisms are builtins that dash (/bin/sh on Debian/Ubuntu) lacks.
var bashisms = map[string]bool{"[[": true, "source": true, "pushd": true, "popd": true, "declare": true, "shopt": true, "function": true, "let": true}

func crlfCand() cand {
	return cand{
		code: sdk.CodeScriptError, conf: 0.95,
		msg: "The shell script has Windows (CRLF) line endings: the shell reads a stray carriage return (\\r) at the end of each line.",
		sugg: []string{
			"Convert the script to Unix line endings: `dos2unix SCRIPT` or `sed -i 's/\\r$//' SCRIPT`.",
			"Stop it coming back: set your editor to LF, or `git config core.autocrlf input` and add `*.sh text eol=lf` to .gitattributes.",
		},
		details: map[string]string{"cause": "crlf"},
	}
}

func matchShell(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	// ": command not found" at the start of a line: the name ended in a
	// CR, which sent the cursor back over it.
	if l.crlf || has(lc, `$'\r'`, `\r'`, `\r’`, "^m:", "^m'", "^m ", "\\r: ") || strings.HasPrefix(lc, ": command not found") {
		if has(lc, "command not found", "not found", "no such file", "bad interpreter", "invalid option", "syntax error", "unexpected", "$'\\r'", "bad substitution") {
			// The CR is the single cause of every error it produces:
			// it outranks the not-found and syntax errors around it.
			c := crlfCand()
			c.rank = codeRank[sdk.CodeCUDAOOM] + 4
			sc.add(i, c)
			return true
		}
	}
	switch {
	case strings.Contains(lc, "command not found"):
		cmd := segmentBefore(l.text, lc, ": command not found")
		if cmd == "" {
			cmd = unquote(restAfter(l.text, lc, "command not found:")) // zsh
		}
		sc.add(i, commandCand(cmd, 0.95))
		return true
	case strings.HasSuffix(lc, ": not found") && (has(lc, "sh: ") || hasNumField(lc)):
		cmd := segmentBefore(l.text, lc, ": not found")
		if bashisms[cmd] {
			sc.add(i, bashismCand(cmd))
			return true
		}
		sc.add(i, commandCand(cmd, 0.9))
		return true
	case strings.Contains(lc, "bad interpreter"):
		interp := segmentBefore(l.text, lc, ": bad interpreter")
		c := commandCand(interp, 0.9)
		c.msg = "The script's #! line names an interpreter that does not exist: " + interp + "."
		c.sugg = append([]string{"Fix the first line of the script (e.g. `#!/usr/bin/env bash` or `#!/usr/bin/env python3`), or run it through its interpreter explicitly."}, c.sugg...)
		sc.add(i, c)
		return true
	case strings.Contains(lc, "is not recognized as an internal or external command"):
		// cmd.exe: "'python' is not recognized as an internal or external command,"
		cmd := strings.TrimSpace(l.text[:strings.Index(lc, "is not recognized")])
		sc.add(i, commandCand(strings.Trim(cmd, "'\"`‘’ "), 0.9))
		return true
	case strings.Contains(lc, "executable file not found in $path"):
		sc.add(i, commandCand(quotedAfter(l.text, lc, "exec"), 0.9))
		return true
	case (strings.HasPrefix(lc, "/usr/bin/env: ") || strings.HasPrefix(lc, "env: ")) && strings.Contains(lc, "no such file or directory"):
		sc.add(i, commandCand(firstQuoted(l.text[strings.IndexByte(l.text, ':')+1:]), 0.9))
		return true
	case sc.in.ExitCode == 127 && strings.HasSuffix(lc, ": no such file or directory") && has(lc, "bash: ", "sh: ", "zsh: "):
		sc.add(i, commandCand(segmentBefore(l.text, lc, ": no such file or directory"), 0.85))
		return true
	}
	if !has(lc, "syntax error", "unbound variable", "bad substitution", "ambiguous redirect", "operator expected",
		"integer expression expected", "pipefail", "unexpected end of file", "unexpected eof") {
		return false
	}
	switch {
	case strings.Contains(lc, "unbound variable"):
		v := segmentBefore(l.text, lc, ": unbound variable")
		sc.add(i, cand{
			code: sdk.CodeScriptError, conf: 0.9,
			msg:     "The shell script used the variable " + v + " but it is not set (set -u stops on unset variables).",
			sugg:    []string{"Export " + v + " before running, or give it a default in the script: `${" + v + ":-default}`."},
			details: map[string]string{"variable": v},
		})
	case has(lc, "syntax error near unexpected token", "syntax error: unexpected end of file", "unexpected eof while looking",
		"syntax error: \"", "syntax error: word unexpected", "syntax error: end of file unexpected", `syntax error: "(" unexpected`):
		c := cand{
			code: sdk.CodeSyntaxError, conf: 0.9,
			msg:  "The shell script has a syntax error: " + clip(l.text, 200),
			sugg: []string{"Check the script with `bash -n SCRIPT` (or shellcheck) at the line shown."},
		}
		if strings.Contains(lc, " unexpected") && !strings.Contains(lc, "near unexpected token") && strings.Contains(lc, "syntax error: ") {
			c.sugg = append(c.sugg, "This is dash's wording: the script uses bash syntax but ran under /bin/sh. Run it with `bash SCRIPT` or use a `#!/usr/bin/env bash` line.")
		}
		sc.add(i, c)
	case strings.Contains(lc, "pipefail"):
		sc.add(i, bashismCand("set -o pipefail"))
	default:
		sc.add(i, cand{
			code: sdk.CodeScriptError, conf: 0.8,
			msg:  "The shell script broke: " + clip(l.text, 200),
			sugg: []string{"Quote variables (\"$VAR\") and check the line with `bash -n` or shellcheck; an empty or unset variable usually causes this."},
		})
	}
	return true
}

// hasNumField reports "x.sh: 12: cmd: not found" (dash's line number field).
func hasNumField(lc string) bool {
	for _, f := range strings.Split(lc, ": ") {
		if allDigits(f) {
			return true
		}
	}
	return false
}

func bashismCand(what string) cand {
	return cand{
		code: sdk.CodeScriptError, conf: 0.9,
		msg:     "The script uses bash syntax (" + what + ") but ran under /bin/sh (dash), which does not support it.",
		sugg:    []string{"Run it with `bash SCRIPT`, or make the first line `#!/usr/bin/env bash` and run it as `./SCRIPT`."},
		details: map[string]string{"construct": what},
	}
}

func commandCand(cmd string, conf float64) cand {
	cmd = unquote(cmd)
	return cand{
		code: sdk.CodeCommandNotFound, conf: conf,
		msg:     "`" + cmd + "`: command not found (it is not on the run's PATH).",
		sugg:    commandSuggestions(cmd),
		details: setDetail(nil, "command", cmd),
	}
}

func commandSuggestions(cmd string) []string {
	base := cmd
	if k := strings.LastIndexByte(base, '/'); k >= 0 {
		base = base[k+1:]
	}
	var s []string
	switch base {
	case "python":
		s = append(s, "Only `python3` may be installed: use `python3`, or install python-is-python3 (Debian/Ubuntu), or activate your virtualenv/conda env first.")
	case "pip":
		s = append(s, "Use `python3 -m pip` (pip is often not on PATH on its own).")
	case "nvidia-smi", "nvcc":
		s = append(s, "The NVIDIA driver/CUDA toolkit tools are not installed or not on PATH here; in Docker, use a CUDA image and run with GPUs.")
	case "conda", "mamba":
		s = append(s, "Initialise conda in this shell (`source ~/miniconda3/etc/profile.d/conda.sh`) or call the env's python directly.")
	case "":
		return []string{"Check the command name and that the program is installed and on PATH."}
	}
	if strings.ContainsRune(cmd, '/') {
		s = append(s, "Check that `"+cmd+"` exists relative to the working directory (and is mounted into the sandbox).")
	} else {
		s = append(s, "Install `"+base+"` or add its directory to PATH; if it lives in a virtualenv or conda env, activate that env in the command.")
	}
	return append(s, "In the Docker sandbox, the image must contain the program: pick an image that has it or install it in the command.")
}

var gateShell = []string{`\r'`, `\r’`, `\r:`, "^m:", "^m'", "^m ", "not found", "is not recognized", "bad interpreter", "no such file", "executable file", "syntax error", "unbound variable",
	"bad substitution", "ambiguous redirect", "operator expected", "integer expression expected", "pipefail", "unexpected end of file", "unexpected eof"}
