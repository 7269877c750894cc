package ui

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts headless Chromium (Debian's chromium) driven by chromedp.
// Without it the test is skipped, unless RUNBOX_REQUIRE_BROWSER=1 (CI).
func browser(t *testing.T) context.Context { return browserB(t) }

func browserB(t testing.TB) context.Context {
	t.Helper()
	exe, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("RUNBOX_REQUIRE_BROWSER") == "1" {
			t.Fatalf("chromium not found: %v", err)
		}
		t.Skip("chromium not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1300, 1000))
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); acancel() })
	ctx, tcancel := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(tcancel)
	return ctx
}

func run(t *testing.T, ctx context.Context, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// screenshot saves the page under $RUNBOX_UI_SCREENSHOTS (how the README's
// pictures are made), when set.
func screenshot(t *testing.T, ctx context.Context, name string) {
	dir := os.Getenv("RUNBOX_UI_SCREENSHOTS")
	if dir == "" {
		return
	}
	var b []byte
	run(t, ctx, chromedp.Sleep(300*time.Millisecond), chromedp.FullScreenshot(&b, 100))
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The runs list shows a live run and updates when it ends, with no reload.
func TestBrowserRunsListIsLive(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	r := e.train(t, "live-one", 30, "0.1")
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.WaitVisible(`tr.run[data-id="`+r.ID+`"][data-state="running"]`),
	)
	screenshot(t, ctx, "dashboard-runs.png")
	run(t, ctx, chromedp.WaitVisible(`tr.run[data-id="`+r.ID+`"][data-state="succeeded"]`))
}

// The run page draws the loss chart with one point per step.
func TestBrowserRunPageChart(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	// A first run loads the progress plugin: lines printed while it
	// loads reach it as one batch, folded into one update.
	warm := e.train(t, "warm", 1, "0")
	if _, err := e.c.Wait(context.Background(), warm.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	r := e.train(t, "chart", 25, "0.05")
	if _, err := e.c.Wait(context.Background(), r.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	var n int
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.WaitVisible(`.chart[data-metric="loss"][data-points="25"] canvas`),
		chromedp.Evaluate(`window.runboxCharts.loss.data[0].length`, &n),
	)
	if n != 25 {
		t.Fatalf("the chart has %d points, want 25", n)
	}
	screenshot(t, ctx, "dashboard-run.png")

	// A run with no metrics says so.
	plain := e.train(t, "plain", 0, "0")
	if _, err := e.c.Wait(context.Background(), plain.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Navigate(e.url+"#/run/"+plain.ID), chromedp.WaitVisible(`#no-metrics`))
}

// Stop from the page stops the run.
func TestBrowserStop(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	r := e.train(t, "to-stop", 600, "0.1")
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.WaitVisible(`#state`),
		chromedp.WaitVisible(`#stop`),
		chromedp.Click(`#stop`),
	)
	got, err := e.c.Wait(context.Background(), r.ID, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != "cancelled" {
		t.Fatalf("after stop from the page: %s", got.State)
	}
	var text string
	run(t, ctx, chromedp.Poll(`document.getElementById("state").textContent === "cancelled"`, nil), chromedp.Text(`#state`, &text))
}
