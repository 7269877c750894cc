package progress

import (
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/plugins/prefilter/tables"
	"github.com/runbox/runbox/sdk"
)

func messageOf(p *sdk.Progress) string {
	if p == nil {
		return ""
	}
	return p.Message
}

// hostPasses is what a host does with Manifest's prefilter, by its
// definition (docs/PLUGINS.md; plugins/prefilter_test.go holds the host's
// implementation to the same one): a Prefilter literal occurs in line, and
// if the literal has PrefilterConfirm entries, one of them matches around
// that occurrence, Before as `(?:P)\z` on the text before it and After as
// `\A(?:P)` on the text after it, each byte >= 0x80 read as U+FFFD.
func hostPasses(line string) bool {
	for _, lit := range Prefilter {
		var entries []sdk.PrefilterConfirm
		for _, c := range PrefilterConfirm {
			if c.Literal == lit {
				entries = append(entries, c)
			}
		}
		for i := 0; i+len(lit) <= len(line); i++ {
			if line[i:i+len(lit)] != lit {
				continue
			}
			if len(entries) == 0 {
				return true
			}
			for _, c := range entries {
				if refMatch(`(?:`+c.Before+`)\z`, line[:i]) && refMatch(`\A(?:`+c.After+`)`, line[i+len(lit):]) {
					return true
				}
			}
		}
	}
	return false
}

var refCache sync.Map // pattern -> *regexp.Regexp

func refMatch(pat, text string) bool {
	re, ok := refCache.Load(pat)
	if !ok {
		re, _ = refCache.LoadOrStore(pat, regexp.MustCompile(pat))
	}
	rs := make([]rune, 0, len(text))
	for i := 0; i < len(text); i++ {
		if c := text[i]; c < 0x80 {
			rs = append(rs, rune(c))
		} else {
			rs = append(rs, 0xfffd)
		}
	}
	return re.(*regexp.Regexp).MatchString(string(rs))
}

// contexts are states a line may be parsed in: Parse's answer for a line
// depends on ParseInput.Last (a fastai table's columns, an MLX or tqdm
// total), so coverage is checked in each.
var contexts = []*sdk.Progress{
	nil,
	{Total: 10, Source: "mlx"},
	{Total: 1000, Source: "tqdm", Step: 5},
	{Source: "fastai", Message: "fastai columns: epoch train_loss valid_loss accuracy time"},
	{Source: "fastai", Message: "fastai columns: epoch step loss"},
	{Source: "huggingface", Total: 100},
}

// confirmSeeds are lines around the confirmed keywords, for the fuzzers.
var confirmSeeds = []string{
	"Step 5/10", "step: 45", "STEP [3/9]", "Steps 45/100", "steps 3 of 10", "45/100 steps", "every 500 steps",
	"Iteration 45", "iterations 4/5", "Iter 50: Train loss 1.5", "iter: 19  lr: 0.1", "Iter(train) [ 50/1000]  lr: 0.01",
	"Iter: [3/10]", "Starting training..., iters: 200", "Batch 7/50", "batches 7 of 50", "7/50 batches",
	"Progress: 45%", "progress 45.5 %", "Total optimization steps = 1,851", "100/100 - 5s - 50ms/step",
	"311/Unknown - 640s 2s/step", "\x1b[1mStep\x1b[0m 5/10", "5/10\x1b[0m steps", "Step\x1b[0m: 5",
	"Progress:\x1b[32m 45%", "0Iter 5: took 3s", "Epoch 2, Step#5", "global_step=5", "ITERATION 3", "Batch(3)", "step=7",
}

// TestPrefilterCovers: every fixture or edge-case line that yields an
// update, in any of the contexts, passes the host's prefilter (literals
// and confirm entries); ordinary lines mostly do not.
func TestPrefilterCovers(t *testing.T) {
	var lines []string
	for _, f := range fixtures(t) {
		data, _ := os.ReadFile(f)
		lines = append(lines, splitLines(string(data))...)
	}
	for _, c := range edgeCases {
		lines = append(lines, c.lines...)
	}
	lines = append(lines, confirmSeeds...)
	var last *sdk.Progress
	for _, l := range lines {
		out := Parse(sdk.ParseInput{Lines: []string{l}, Last: last})
		checkCovered(t, l, last, out)
		for _, u := range out.Updates {
			if last == nil {
				last = &sdk.Progress{}
			}
			last.Merge(u)
		}
		for _, c := range contexts {
			checkCovered(t, l, c, Parse(sdk.ParseInput{Lines: []string{l}, Last: c}))
		}
	}
	mix := SyntheticMix(20000)
	lit, pass, progress := 0, 0, 0
	for _, l := range mix {
		if hasPrefilter(l) {
			lit++
		}
		if hostPasses(l) {
			pass++
		}
		if len(Parse(sdk.ParseInput{Lines: []string{l}}).Updates) > 0 {
			progress++
		}
	}
	t.Logf("of %d mix lines, %d contain a prefilter literal, %d pass the prefilter, %d yield progress", len(mix), lit, pass, progress)
	if lit > len(mix)/10 {
		t.Errorf("prefilter literals not selective: %d of %d lines have one, %d are progress", lit, len(mix), progress)
	}
	if pass > progress*3/2 {
		t.Errorf("prefilter not selective: %d of %d lines pass, %d are progress", pass, len(mix), progress)
	}
	if progress < len(mix)/200 || progress > len(mix)/50 {
		t.Errorf("mix has %d progress lines of %d, want ~1%%", progress, len(mix))
	}
}

func checkCovered(t *testing.T, l string, last *sdk.Progress, out sdk.ParseOutput) {
	t.Helper()
	if len(out.Updates) == 0 {
		return
	}
	// prefilter.Rows sends a table's lines with no literal: a header drawn
	// with pipes always, a row once the header (or a row with a literal)
	// passed
	if tables.PipeHeader(l) {
		return
	}
	if h, ok := gridOf(messageOf(last)); ok && h != "" && (tables.Row(l) || tables.PipeRow(l)) {
		return
	}
	if _, _, ok := tables.KVRow(l); ok && last != nil && last.Source == "table" {
		return
	}
	if !hasPrefilter(l) {
		t.Errorf("line yields %+v but contains no prefilter literal: %q", out.Updates, l)
	} else if !hostPasses(l) {
		t.Errorf("line yields %+v (last %+v) but the prefilter's confirm entries drop it: %q", out.Updates, last, l)
	}
}

// FuzzPrefilterConfirm: no line that yields an update, in any context, is
// dropped by the prefilter's confirm entries.
func FuzzPrefilterConfirm(f *testing.F) {
	for _, l := range confirmSeeds {
		f.Add(l)
	}
	for _, c := range edgeCases {
		for _, l := range c.lines {
			f.Add(l)
		}
	}
	for _, file := range fixtures(f) {
		data, _ := os.ReadFile(file)
		for _, l := range splitLines(string(data)) {
			if strings.Contains(l, "tep") || strings.Contains(l, "TEP") || strings.Contains(l, "atch") ||
				strings.Contains(strings.ToLower(l), "iter") || strings.Contains(l, "rogress") {
				f.Add(l)
			}
		}
	}
	f.Fuzz(func(t *testing.T, line string) {
		for _, c := range contexts {
			out := Parse(sdk.ParseInput{Lines: []string{line}, Last: c})
			if len(out.Updates) > 0 && !hostPasses(line) {
				t.Fatalf("%q yields %+v (last %+v) but the host would never send it", line, out.Updates, c)
			}
		}
	})
}

// TestConfirmDrops: the confirm entries do drop ordinary text.
func TestConfirmDrops(t *testing.T) {
	for _, l := range []string{
		"INFO trainer: will save a checkpoint every 500 steps",
		"the next step is to install the driver",
		"  warmup_steps: 500",
		"INFO: batch_size=32, gradient_accumulation_steps=4",
		"Applying patch 3 of 5", "Dispatching 4 jobs", "no match found",
		"TypeError: 'int' object is not iterable", "INFO tensorboard: SummaryWriter at runs/exp1",
		"Download in progress...", "STEPS TO REPRODUCE",
	} {
		if hostPasses(l) {
			t.Errorf("%q passes the prefilter", l)
		}
		for _, c := range contexts {
			if out := Parse(sdk.ParseInput{Lines: []string{l}, Last: c}); len(out.Updates) > 0 {
				t.Errorf("%q yields %+v", l, out.Updates)
			}
		}
	}
}

// TestPrefilterCompiles: the host ignores (with a warning) a confirm entry
// it cannot compile, which would silently drop the lines it was for.
func TestPrefilterCompiles(t *testing.T) {
	if _, errs := prefilter.New(Prefilter, PrefilterConfirm); len(errs) > 0 {
		t.Errorf("the host's prefilter rejects entries: %v", errs)
	}
}
