package ui

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
)

// A run whose loss goes NaN draws a chart, not a crash or an empty card:
// the finite steps as a line, a red mark for each NaN step.
func TestBrowserChartMarksNaN(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	warm := e.train(t, "warm", 1, "0")
	if _, err := e.c.Wait(context.Background(), warm.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	script := `for i in 1 2 3 4 5 6; do l="$(( 100 / i ))"; [ $i -gt 4 ] && l='"NaN"'; echo "##PROGRESS## {\"step\": $i, \"total\": 6, \"metrics\": {\"loss\": $l}}"; sleep 0.15; done`
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Name: "nan", Command: []string{"sh", "-c", script}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(context.Background(), r.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	var line, marks []any
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.WaitVisible(`.chart[data-metric="loss"][data-points="6"] canvas`),
		chromedp.Evaluate(`window.runboxCharts.loss.data[1]`, &line),
		chromedp.Evaluate(`window.runboxCharts.loss.data[window.runboxCharts.loss.series.findIndex(s => s.label === "NaN/Inf")] || []`, &marks),
	)
	if len(line) != 6 || line[3] != float64(25) || line[4] != nil || line[5] != nil {
		t.Fatalf("loss line %v: want 4 values, then gaps", line)
	}
	if len(marks) != 6 || marks[3] != nil || marks[4] != float64(25) || marks[5] != float64(25) {
		t.Fatalf("NaN marks %v: want two, level with the last finite loss", marks)
	}
}
