package prefilter

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/prefilter/tables"
)

func TestTableShapes(t *testing.T) {
	for _, c := range []struct {
		line        string
		header, row bool
	}{
		{"  Iter     Train Loss    Remaining Time", true, false},
		{"epoch\ttrain_loss\tval_loss", true, false},
		{"#    name    LOSS", true, false},
		{"The loss went down over time", false, false}, // prose: single spaces
		{"Epoch 3/10  loss  0.5", false, false},        // numbers are not names
		{"loss:  0.5   acc:  0.9", false, false},
		{"     1         2.5000            12.00s", false, true},
		{"ESC[4AESC[J0      100     626.687", false, true},
		{" unknown    unknown        8    0.0000 h", false, true},
		{"0.1 nan inf", false, true},
		{"   all     48     28     0", false, false}, // a labelled row
		{"step 1 2", false, false},
		{"1 2 a b c", false, false}, // more words than numbers
		{"loss=0.5 1 2", false, false},
		{"12", false, false},
		{"1.2.3 4", false, false},
	} {
		if got := tables.Header(c.line); got != c.header {
			t.Errorf("Header(%q) = %v", c.line, got)
		}
		if got := tables.Row(c.line); got != c.row {
			t.Errorf("Row(%q) = %v", c.line, got)
		}
	}
}

func TestKVRow(t *testing.T) {
	for _, c := range []struct {
		line string
		want bool
	}{
		{"|    policy_entropy       | 3.34        |", true},
		{"| ep_rew_mean | nan |", true},
		{"| time/                   |             |", false}, // a heading
		{"| a | b | c |", false},
		{"| two words | 1 |", false},
		{"| name | 1.5s |", false},
		{"name | 1.5 |", false},
		{"\u2502 training_iteration          20 \u2502", true},
		{"\u2502 config/train_loop_config/lr   0.003 \u2502", true},
		{"\u2502 Trial X result                  \u2502", false},
	} {
		if _, _, got := tables.KVRow(c.line); got != c.want {
			t.Errorf("KVRow(%q) = %v", c.line, got)
		}
	}
}

func TestPipeTable(t *testing.T) {
	for _, c := range []struct {
		line        string
		header, row bool
	}{
		{"| Trial name | status | iter | reward |", true, false},
		{"|------------+--------+------+--------|", false, false},
		{"| trial_1    | RUNNING |   66 | -1105.8 |", false, true},
		{"| a | b |", false, false}, // two cells: a name/value row, if any
		{"| x | 1 |", false, false},
		{"| Trial name | 3 | iter |", false, true},
	} {
		if got := tables.PipeHeader(c.line); got != c.header {
			t.Errorf("PipeHeader(%q) = %v", c.line, got)
		}
		if got := tables.PipeRow(c.line); got != c.row {
			t.Errorf("PipeRow(%q) = %v", c.line, got)
		}
	}
}

// TestRows: a table's rows pass once its header did, with the header's
// first line before it; a gap of other lines ends the table.
func TestRows(t *testing.T) {
	f, errs := New([]string{"loss", "Loss"}, nil)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	type step struct {
		line   string
		pass   bool
		before string
	}
	gap := make([]step, rowGap+1)
	for i := range gap {
		gap[i] = step{line: "other text"}
	}
	steps := []step{
		{line: "   1   2.5   3.0"}, // no header yet
		{line: "mean     last     sample"},
		{line: "loss     loss     counter", pass: true, before: "mean     last     sample"},
		{line: "0.5      0.4      10", pass: true},
		{line: "", pass: false},
		{line: "0.3      0.2      20", pass: true},
		{line: "final loss = 0.3", pass: true},
		{line: "0.2      0.1      40", pass: true},
	}
	steps = append(steps, gap...)
	steps = append(steps, step{line: "0.1      0.1      80"}) // the table ended
	steps = append(steps, step{line: "Train Loss   Val Loss   Epoch", pass: true})
	steps = append(steps, step{line: "  0.1        0.2          3", pass: true})
	steps = append(steps, gap...)
	// a header drawn with pipes needs no literal
	steps = append(steps, step{line: "| trial | status | it | reward |", pass: true})
	steps = append(steps, step{line: "| t_01  | RUNNING | 3 | -12.5 |", pass: true})
	var r Rows
	for i, s := range steps {
		pass, b := r.Match(f, s.line)
		before := strings.Join(b, "\n")
		if pass != s.pass || before != s.before {
			t.Errorf("%d %q: pass %v before %q, want %v %q", i, s.line, pass, before, s.pass, s.before)
		}
	}
}
