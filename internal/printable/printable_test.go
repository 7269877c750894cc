package printable

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"loss 0.5 → 0.4 █ é", "loss 0.5 → 0.4 █ é"},
		{"a\tb\nc", "a\tb\nc"},
		{"title \x1b]0;pwned\x07 clear \x1b[2J", `title \x1b]0;pwned\x07 clear \x1b[2J`},
		{"over\rwrite", `over\rwrite`},
		{"del\x7f c1\u0085 line\u2028sep", `del\x7f c1\u0085 line\u2028sep`},
		{"evil\u202egnp.exe zero\u200bwidth", `evil\u202egnp.exe zero\u200bwidth`},
		{"bad \xff\xfe utf8", `bad \xff\xfe utf8`},
		{"tag\U000e0001", `tag\U000e0001`},
	} {
		if got := String(tc.in); got != tc.want {
			t.Errorf("String(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"python3", "train.py", "--lr=0.1", "--out", "runs/a:b,c@d+e%"}, "python3 train.py --lr=0.1 --out runs/a:b,c@d+e%"},
		{[]string{"sh", "-c", "echo hi; exit 3"}, "sh -c 'echo hi; exit 3'"},
		{[]string{"echo", "it's", ""}, `echo 'it'\''s' ''`},
		{[]string{"sh", "-c", "echo 'hi' > x", ""}, `sh -c 'echo '\''hi'\'' > x' ''`},
		{[]string{"A=1", "x=1"}, "'A=1' x=1"},
		{[]string{"~", "#x", "$HOME", "*"}, "'~' '#x' '$HOME' '*'"},
		{[]string{"python3", "-c", "import os\nprint('x')"}, `python3 -c $'import os\nprint(\'x\')'`},
		{[]string{"sh", "-c", "echo \x1b]0;pwned\x07 \\ b\tc"}, `sh -c $'echo \x1b]0;pwned\x07 \\ b\tc'`},
		{[]string{"x\u202ey", "bad\xff"}, `$'x\xe2\x80\xaey' $'bad\xff'`},
		{[]string{"日本語", "é"}, "日本語 é"},
	} {
		if got := Command(tc.args); got != tc.want {
			t.Errorf("Command(%q) = %s, want %s", tc.args, got, tc.want)
		}
	}
}

func TestRunOfAShellRunIsItsShC(t *testing.T) {
	if got, want := Run([]string{"echo hi |", "tr h H"}, true), "sh -c 'echo hi | tr h H'"; got != want {
		t.Errorf("Run(shell) = %s, want %s", got, want)
	}
	if got, want := Run([]string{"echo", "hi there"}, false), "echo 'hi there'"; got != want {
		t.Errorf("Run = %s, want %s", got, want)
	}
}

// bash reads every line Command writes back as the arguments it was made
// from: the quoting is the shell's, not a look-alike.
func TestCommandReadsBackInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for _, args := range [][]string{
		{"sh", "-c", "echo hi; exit 3"},
		{"echo", "it's", "", "a\\b", `"q"`, "$x", "`id`", "!", "*"},
		{"python3", "-c", "import os\nprint('x')\n\tdone"},
		{"printf", "\x1b]0;t\x07\r\x7f\u0085\u202e\u2028end"},
		{"bad\xff\xfeutf8", "日本語", "A=1", "x=y"},
		{"tag\U000e0001", "e\u0301"},
	} {
		line := Command(args)
		// The line's words become the script's arguments through eval.
		// In the C locale too (CI's env -i has no LANG), where bash leaves
		// a \u escape as written.
		for _, locale := range []string{"C", "C.UTF-8"} {
			cmd := exec.Command(bash, "-c", "eval \"set -- $1\"; for a in \"$@\"; do printf '%s\\0' \"$a\"; done", "_", line)
			cmd.Env = []string{"LC_ALL=" + locale, "PATH=/usr/bin:/bin"}
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("bash (LC_ALL=%s) on %s: %v", locale, line, err)
			}
			got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
			if !slices.Equal(got, args) {
				t.Errorf("bash (LC_ALL=%s) read %s as %q, want %q", locale, line, got, args)
			}
		}
		if !clean(strings.ReplaceAll(line, "\x00", ""), true) {
			t.Errorf("the line itself has a control character: %q", line)
		}
	}
}

// A rune cut between two writes comes out whole, not as two escapes.
func TestWriterHoldsASplitRune(t *testing.T) {
	var b bytes.Buffer
	w := Writer(&b)
	s := []byte("a █ b\x1b[2J\n")
	for i := range s {
		if _, err := w.Write(s[i : i+1]); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := b.String(), "a █ b\\x1b[2J\n"; got != want {
		t.Errorf("written %q, want %q", got, want)
	}
}
