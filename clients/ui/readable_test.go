package ui

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/printable"
	"github.com/runbox/runbox/sandbox"
)

// submit starts a process run of script and waits for it to end.
func (e *testEnv) submit(t *testing.T, name, script string) *api.Run {
	t.Helper()
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Name: name, Command: []string{"sh", "-c", script}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(context.Background(), r.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	return r
}

// A loss near 1e302 over three integer steps: uPlot's own ticks would
// put the step axis at 1.2, 1.4, ... and leave the value axis without a
// label (its increments end at 1e16). The step axis gets whole numbers,
// the value axis labels in scientific form, and the progress/percent
// chart (the bar over again) is not drawn.
func TestBrowserAxisLabels(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	e.submit(t, "warm", `echo '##PROGRESS## {"step": 1, "total": 1}'`)
	r := e.submit(t, "huge", `for i in 1 2 3; do echo "##PROGRESS## {\"step\": $i, \"total\": 3, \"metrics\": {\"loss\": ${i}e302}}"; sleep 0.15; done`)
	var steps, values []string
	var charts []string
	var legend string
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.WaitVisible(`.chart[data-metric="loss"][data-points="3"] canvas`),
	)
	// uPlot labels its axes on its first draw after the data; a chart that
	// gets no value labels at all (the failure this test is about) is
	// given ten seconds.
	_ = chromedp.Run(ctx, chromedp.Poll(`(window.runboxCharts.loss.axes[1]._values || []).length > 0`, nil, chromedp.WithPollingTimeout(10*time.Second)))
	run(t, ctx,
		chromedp.Evaluate(`(window.runboxCharts.loss.axes[0]._values || []).map(String)`, &steps),
		chromedp.Evaluate(`(window.runboxCharts.loss.axes[1]._values || []).map(String)`, &values),
		chromedp.Evaluate(`[...document.querySelectorAll(".chart")].map(c => c.dataset.metric)`, &charts),
		chromedp.Evaluate(`(() => { const u = window.runboxCharts.loss; u.setCursor({left: u.valToPos(2, "x"), top: 10}); return document.querySelector(".chart .u-legend").textContent; })()`, &legend),
	)
	if !strings.Contains(legend, "loss2e+302") {
		t.Errorf("the hover legend reads %q, want loss 2e+302", legend)
	}
	integer := regexp.MustCompile(`^\d+$`)
	for _, s := range steps {
		if s != "" && !integer.MatchString(s) {
			t.Errorf("step axis label %q is not a whole number (labels %v)", s, steps)
			break
		}
	}
	if len(steps) < 2 {
		t.Errorf("step axis labels %v: want at least two", steps)
	}
	sci := regexp.MustCompile(`^\d(\.\d+)?e\+30\d$`)
	n := 0
	for _, v := range values {
		if sci.MatchString(v) {
			n++
		}
	}
	if n < 2 {
		t.Errorf("value axis labels %v: want at least two in scientific form (…e+302)", values)
	}
	if strings.Join(charts, ",") != "loss" {
		t.Errorf("charts drawn: %v, want only loss (no progress/percent)", charts)
	}
}

// A 10 000-character line without a space wraps in the log box: the page
// is no wider than the window and the box does not scroll sideways.
func TestBrowserLongLogLineWraps(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	r := e.submit(t, "long-line", `printf '%10000s\n' '' | tr ' ' x; echo after`)
	var widths []int
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.Poll(`(document.getElementById("log") || {}).textContent?.includes("after")`, nil),
		chromedp.Evaluate(`(() => { const p = document.getElementById("log"); return [document.documentElement.scrollWidth, window.innerWidth, p.scrollWidth, p.clientWidth, p.textContent.length]; })()`, &widths),
	)
	page, window, box, boxClient, text := widths[0], widths[1], widths[2], widths[3], widths[4]
	if text < 10000 {
		t.Fatalf("the log shows %d characters, want the 10 000-character line", text)
	}
	if page > window {
		t.Errorf("the page is %d px wide in a %d px window: the log line widened it", page, window)
	}
	if box > boxClient+1 {
		t.Errorf("the log box scrolls sideways (%d px of content in %d): the line did not wrap", box, boxClient)
	}
}

// A command shows as the shell line `runbox status` gives, in the runs
// list and on the run's page: quoted where a shell needs it, and its
// newline and right-to-left override as escapes, not acted on (the
// override would show the rest of the line reversed).
func TestBrowserCommandIsItsShellLine(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	script := "echo 'hi there'\n# \u202eevil"
	r := e.submit(t, "cmdline", script)
	want := `sh -c $'echo \'hi there\'\n# \xe2\x80\xaeevil'`
	var list, page string
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.Poll(`document.querySelector("td.cmd") !== null`, nil),
		chromedp.Evaluate(`document.querySelector("td.cmd").textContent`, &list),
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.Poll(`document.querySelector("#head code") !== null`, nil),
		chromedp.Evaluate(`document.querySelector("#head code").textContent`, &page),
	)
	if list != want || page != want {
		t.Errorf("command shown as %q (list) and %q (run page), want %q", list, page, want)
	}
}

// The runs list's filter takes a run's number as `runbox ls` shows it.
func TestMatchText(t *testing.T) {
	r := &api.Run{ID: "01m8abc42", ShortID: "7", Name: "train-42", Spec: api.Spec{Command: []string{"python3", "train.py"}}}
	tests := []struct {
		text string
		want bool
	}{
		{"7", true},
		{"42", false}, // a number names a run, not a substring
		{"70", false},
		{"train", true},
		{"01m8", true},
		{"train-42", true},
		{"nope", false},
	}
	for _, tt := range tests {
		if got := matchText(r, tt.text); got != tt.want {
			t.Errorf("matchText(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

// The page shows a run's hidden characters as escapes where `runbox
// status` does: a run named so that a right-to-left override makes it read
// as another file ("report-\u202egnp.exe" reads "report-exe.png"), with a
// screen clear in the name and the override in the command a classifier
// quotes. The runs list, the run's title and its failure card show the
// escapes, and none carries the override itself; the log, shown as the
// run wrote it (as `runbox logs` gives it), does, which shows the
// override reaches the page where runbox does not escape it.
func TestBrowserShowsARunsHiddenCharactersAsEscapes(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	name := "report-\u202egnp.exe\x1b[2J"
	r := e.submit(t, name, "echo 'fetching \u202etxt.exe'; nosuchcmd-\u202eevil")
	var list, title, failure, logText string
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.Poll(`document.querySelector("tr.run td:nth-child(3)") !== null`, nil),
		chromedp.Evaluate(`document.querySelector("tr.run td:nth-child(3)").textContent`, &list),
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.Poll(`document.querySelector("#failure .failure") !== null && document.querySelector("#log span") !== null`, nil),
		chromedp.Evaluate(`document.getElementById("title").textContent`, &title),
		chromedp.Evaluate(`document.getElementById("failure").textContent`, &failure),
		chromedp.Evaluate(`document.getElementById("log").textContent`, &logText),
	)
	want := `report-\u202egnp.exe\x1b[2J`
	if list != want {
		t.Errorf("runs list shows the name as %q, want %q", list, want)
	}
	if !strings.HasPrefix(title, want) {
		t.Errorf("run page title %q, want it to begin %q", title, want)
	}
	for where, s := range map[string]string{"list": list, "title": title, "failure": failure} {
		if strings.ContainsAny(s, "\u202e\x1b") {
			t.Errorf("%s carries the run's hidden characters themselves: %q", where, s)
		}
	}
	if !strings.Contains(failure, `nosuchcmd-\u202eevil`) {
		t.Errorf("failure card %q does not quote the command with its override shown", failure)
	}
	if !strings.Contains(logText, "fetching \u202etxt.exe") {
		t.Errorf("log %q: want the run's own line, override and all", logText)
	}
}

// The page's set of hidden characters is printable's, rune for rune:
// each code point is given to the page's shown() and kept where it
// comes back changed, and the list is compared with printable.Hidden's.
// Code points that Go's Unicode tables and Chromium's disagree about
// (a format character added in a newer Unicode) are listed apart and
// allowed only where Go's tables do not assign the code point at all.
func TestBrowserHiddenIsPrintables(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	var page []int
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.Poll(`typeof shown === "function"`, nil),
		chromedp.Evaluate(`(() => { const out = []; for (let n = 0; n <= 0x10ffff; n++) { if (n >= 0xd800 && n <= 0xdfff) continue; const c = String.fromCodePoint(n); if (shown(c) !== c) out.push(n); } return out; })()`, &page),
	)
	inPage := map[rune]bool{}
	for _, n := range page {
		inPage[rune(n)] = true
	}
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r <= 0xdfff || printable.Hidden(r) == inPage[r] {
			continue
		}
		assigned := unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z, unicode.C)
		if assigned {
			t.Errorf("U+%04X: printable.Hidden %v, the page's shown() %v", r, printable.Hidden(r), inPage[r])
		}
	}
	for _, r := range []rune{0x1b, 0x7f, 0x85, 0x2028, 0x202e, 0x200b, 0xfeff, 0xe0001} {
		if !inPage[r] {
			t.Errorf("U+%04X is shown as it is", r)
		}
	}
	for _, r := range []rune{'\t', '\n', 'a', 0xe9, 0x4e2d} {
		if inPage[r] {
			t.Errorf("U+%04X is escaped", r)
		}
	}
}
