package ui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
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
	r := e.train(t, "chart", 25, "0.15")
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

	// A run with no metrics says so.
	plain := e.train(t, "plain", 0, "0")
	if _, err := e.c.Wait(context.Background(), plain.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	run(t, ctx, chromedp.Navigate(e.url+"#/run/"+plain.ID), chromedp.WaitVisible(`#no-metrics`))
}

// A retry's page overlays its parent's metrics on its own.
func TestBrowserOverlaysParent(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	bg := context.Background()
	first := e.train(t, "first", 5, "0.1")
	if _, err := e.c.Wait(bg, first.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	retry, err := e.c.Retry(bg, first.ID, api.RunRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(bg, retry.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	var labels []string
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+retry.ID),
		chromedp.Poll(`window.runboxCharts.loss && window.runboxCharts.loss.series.length === 3`, nil),
		chromedp.Evaluate(`window.runboxCharts.loss.series.map(s => s.label)`, &labels),
	)
	// The parent is named by its short id, as `runbox ls` names it.
	if len(labels) != 3 || labels[1] != "loss" || first.ShortID == "" || labels[2] != first.ShortID {
		t.Fatalf("chart series %v, want step, loss and the parent %s", labels, first.ShortID)
	}
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

// TestScreenshots makes the README's pictures (docs/dashboard-*.png) when
// RUNBOX_UI_SCREENSHOTS names a directory: a few runs of a training script,
// one failing, one still going.
func TestScreenshots(t *testing.T) {
	if os.Getenv("RUNBOX_UI_SCREENSHOTS") == "" {
		t.Skip("RUNBOX_UI_SCREENSHOTS not set")
	}
	e := startEnv(t)
	ctx := browser(t)
	trainer := func(name string, n int, lr float64, fail bool) *api.Run {
		script := fmt.Sprintf(`awk -v n=%d -v lr=%g -v fail=%d 'BEGIN{srand(7); for(i=1;i<=n;i++){ loss=2.3*exp(-i*lr/40)+0.15+0.08*rand(); acc=1-exp(-i*lr/30)*0.9; if (fail && i>n*0.6) loss="NaN"; printf "##PROGRESS## {\"step\": %%d, \"total\": %%d, \"epoch\": %%d, \"epoch_total\": 3, \"metrics\": {\"loss\": %%s, \"accuracy\": %%.4f}}\n", i, n, 1+int(3*(i-1)/n), loss, acc; printf "epoch %%d step %%d loss %%s\n", 1+int(3*(i-1)/n), i, loss; fflush(); system("sleep 0.02") } if (fail) { print "RuntimeError: loss is NaN at step " int(n*0.6) > "/dev/stderr"; exit 1 } }'`, n, lr, map[bool]int{false: 0, true: 1}[fail])
		r, err := e.c.Submit(context.Background(), api.RunRequest{Name: name, Command: []string{"sh", "-c", script}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ()})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	warm := e.train(t, "warm-up", 1, "0")
	_, _ = e.c.Wait(context.Background(), warm.ID, time.Minute)
	for _, n := range []string{"tokenizer-smoke", "data-prep"} {
		_, _ = e.c.Wait(context.Background(), trainer(n, 20, 2, false).ID, time.Minute)
	}
	ok := trainer("resnet-baseline", 150, 1, false)
	bad := trainer("resnet-lr-high", 120, 3, true)
	_, _ = e.c.Wait(context.Background(), ok.ID, time.Minute)
	_, _ = e.c.Wait(context.Background(), bad.ID, time.Minute)
	trainer("resnet-long", 3000, 0.3, false)
	time.Sleep(3 * time.Second)
	run(t, ctx, chromedp.EmulateViewport(1300, 420), chromedp.Navigate(e.url), chromedp.WaitVisible(`tr.run[data-state="running"]`))
	screenshot(t, ctx, "dashboard-runs.png")
	run(t, ctx, chromedp.EmulateViewport(1300, 1000))
	run(t, ctx, chromedp.Navigate(e.base()+"/#/run/"+ok.ID), chromedp.WaitVisible(`.chart[data-metric="loss"] canvas`))
	screenshot(t, ctx, "dashboard-run.png")
}
