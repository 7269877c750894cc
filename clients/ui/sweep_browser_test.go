package ui

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/printable"
	"github.com/runbox/runbox/sandbox"
)

// The sweeps list links to a sweep's page: one row per member with its
// params, sortable by a metric, and every member's curve on one chart.
func TestBrowserSweepPage(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	bg := context.Background()
	warm := e.train(t, "warm", 1, "0") // loads the progress plugin
	if _, err := e.c.Wait(bg, warm.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	// loss = k*100/i at step i: member k=1 is lowest throughout.
	script := `i=1; while [ $i -le 5 ]; do echo "##PROGRESS## {\"step\": $i, \"total\": 5, \"metrics\": {\"loss\": $(( {k} * 100 / i ))}}"; sleep 0.05; i=$((i+1)); done`
	sw, err := e.c.SubmitSweep(bg, api.SweepRequest{
		Run:        api.RunRequest{Command: []string{"sh", "-c", script}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ()},
		ParamNames: []string{"k"}, Sets: []map[string]string{{"k": "3"}, {"k": "1"}, {"k": "2"}}, Parallel: 2, Name: "ks",
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.WaitSweep(bg, sw.ID); err != nil {
		t.Fatal(err)
	}
	var first, cmdline string
	run(t, ctx,
		chromedp.Navigate(e.url+"#/sweeps"),
		chromedp.WaitVisible(`tr.sweep[data-id="`+sw.ID+`"]`),
		chromedp.Evaluate(`document.querySelector('tr.sweep[data-id="`+sw.ID+`"] td.cmd').textContent`, &cmdline),
		chromedp.Click(`tr.sweep[data-id="`+sw.ID+`"] a`),
		chromedp.WaitVisible(`#members tr.member:nth-child(3)`),
		chromedp.WaitVisible(`.chart[data-metric="loss"][data-members="3"] canvas`),
		chromedp.Click(`th[data-key="m:loss"]`),
		chromedp.WaitVisible(`th[data-key="m:loss"]`),
		chromedp.Text(`#members tbody tr:first-child td:nth-child(2)`, &first),
	)
	// The sweeps list shows the command as `runbox sweep ls` does.
	if want := printable.Command([]string{"sh", "-c", script}); cmdline != want {
		t.Errorf("sweeps list shows the command as %q, want %q", cmdline, want)
	}
	if first != "1" {
		t.Errorf("sorted by loss, the first member is k=%q, want 1", first)
	}
	var series int
	run(t, ctx, chromedp.Evaluate(`window.runboxCharts.loss.series.length`, &series))
	if series != 4 { // x plus three members
		t.Errorf("the loss chart has %d series, want 4", series)
	}
	screenshot(t, ctx, "sweep.png")

	// Its link opens the compare view of exactly its members (issue 26),
	// with k the param that differs.
	var rows, params []string
	run(t, ctx,
		chromedp.Click(`#sweep-compare`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare tr.cmp-row:nth-child(3)`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#compare tr.cmp-row')].map(t => t.dataset.id)`, &rows),
		chromedp.Evaluate(`[...document.querySelectorAll('#compare th[data-param]')].map(t => t.dataset.param)`, &params),
	)
	members, err := e.c.Sweep(bg, sw.ID, "")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, m := range members.Runs {
		want = append(want, m.ID)
	}
	slices.Sort(rows)
	slices.Sort(want)
	if !slices.Equal(rows, want) || !slices.Equal(params, []string{"k"}) {
		t.Errorf("the sweep's compare view: rows %v (members %v), params %v", rows, want, params)
	}
}
