package ui

import (
	"context"
	"errors"
	"net/url"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/testwait"
	"github.com/runbox/runbox/sandbox"
)

// trainLR submits a run with parameters --lr and --epochs whose loss goes
// through losses, one step each.
func (e *testEnv) trainLR(t *testing.T, lr string, losses ...string) *api.Run {
	t.Helper()
	var b strings.Builder
	for i, l := range losses {
		b.WriteString(`echo '##PROGRESS## {"step": ` + string(rune('1'+i)) + `, "total": ` + string(rune('0'+len(losses))) + `, "metrics": {"loss": ` + l + `}}'; sleep 0.1; `)
	}
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Command: []string{"sh", "-c", b.String(), "train", "--lr", lr, "--epochs", "3"},
		Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(context.Background(), r.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	return r
}

// waitLosses waits until the comparison of runs has a loss for each.
func (e *testEnv) waitLosses(t *testing.T, runs ...*api.Run) {
	t.Helper()
	var ids []string
	for _, r := range runs {
		ids = append(ids, r.ID)
	}
	err := testwait.For("the runs' losses", 30*time.Second, func() error {
		cmp, err := e.c.Compare(context.Background(), url.Values{"run": ids})
		if err != nil {
			return err
		}
		for _, r := range cmp.Rows {
			if r.Metrics["loss"].Best == nil {
				return errors.New("no loss yet for " + r.RunID)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// Runs ticked on the list open the comparison view, which shows only the
// params that differ, sorts by best loss (and the other way on a click),
// and overlays the runs' curves.
func TestBrowserCompareView(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	warm := e.train(t, "warm", 1, "0")
	if _, err := e.c.Wait(context.Background(), warm.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	a := e.trainLR(t, "0.1", "0.8", "0.5")
	b := e.trainLR(t, "0.01", "0.6", "0.2")
	c := e.trainLR(t, "1", "1.0", "0.9")
	e.waitLosses(t, a, b, c)
	tick := func(id string) chromedp.Action {
		return chromedp.Click(`input.tick[data-id="`+id+`"]`, chromedp.ByQuery)
	}
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.WaitVisible(`input.tick[data-id="`+c.ID+`"]`, chromedp.ByQuery),
		tick(a.ID), tick(b.ID), tick(c.ID),
		chromedp.Click(`#compare-ticked`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare tr.cmp-row`, chromedp.ByQuery),
	)
	var params, order []string
	run(t, ctx,
		chromedp.Evaluate(`[...document.querySelectorAll('#compare th[data-param]')].map(t => t.dataset.param)`, &params),
		chromedp.Evaluate(`[...document.querySelectorAll('#compare tr.cmp-row')].map(t => t.dataset.id)`, &order),
	)
	if !slices.Equal(params, []string{"lr"}) {
		t.Fatalf("params shown %v, want only lr (epochs is the same in every run)", params)
	}
	if want := []string{b.ID, a.ID, c.ID}; !slices.Equal(order, want) {
		t.Fatalf("rows %v, want by best loss %v", order, want)
	}
	run(t, ctx,
		chromedp.WaitVisible(`.chart[data-metric="loss"][data-runs="3"] canvas`, chromedp.ByQuery),
		chromedp.Click(`#compare th[data-sort="best:loss"]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare th[data-sort="best:loss"]`, chromedp.ByQuery),
	)
	err := testwait.For("the rows sorted the other way", 10*time.Second, func() error {
		if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#compare tr.cmp-row')].map(t => t.dataset.id)`, &order)); err != nil {
			return err
		}
		if !slices.Equal(order, []string{c.ID, a.ID, b.ID}) {
			return errors.New("order " + strings.Join(order, ","))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	var all []string
	run(t, ctx,
		chromedp.Click(`#all-params`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare th[data-param="epochs"]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#compare th[data-param]')].map(t => t.dataset.param)`, &all),
	)
	if !slices.Equal(all, []string{"epochs", "lr"}) {
		t.Fatalf("all params %v", all)
	}
	// Filtered by a param: only the run with lr=0.01 is left.
	run(t, ctx,
		chromedp.SetValue(`#cmp-filter`, "lr=0.01", chromedp.ByQuery),
		chromedp.Evaluate(`document.getElementById("cmp-filter").dispatchEvent(new Event("change"))`, nil),
	)
	err = testwait.For("the filtered rows", 10*time.Second, func() error {
		if err := chromedp.Run(ctx, chromedp.Evaluate(`[...document.querySelectorAll('#compare tr.cmp-row')].map(t => t.dataset.id)`, &order)); err != nil {
			return err
		}
		if !slices.Equal(order, []string{b.ID}) {
			return errors.New("rows " + strings.Join(order, ","))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	screenshot(t, ctx, "compare.png")
}

// A run whose loss went NaN (the diverged run one most wants to see) is
// compared like any other: its last loss reads NaN. The comparison's
// answer failed to encode it at first, and then the page's number
// formatting threw on the answer's word for it.
func TestBrowserCompareViewWithNaN(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	a := e.trainLR(t, "0.1", "0.8", "0.5")
	n := e.trainLR(t, "50", "0.7", "NaN")
	e.waitLosses(t, a, n)
	var cells []string
	run(t, ctx,
		chromedp.Navigate(e.url),
		chromedp.WaitVisible(`input.tick[data-id="`+n.ID+`"]`, chromedp.ByQuery),
		chromedp.Click(`input.tick[data-id="`+a.ID+`"]`, chromedp.ByQuery),
		chromedp.Click(`input.tick[data-id="`+n.ID+`"]`, chromedp.ByQuery),
		chromedp.Click(`#compare-ticked`, chromedp.ByQuery),
		chromedp.WaitVisible(`#compare tr.cmp-row[data-id="`+n.ID+`"]`, chromedp.ByQuery),
		chromedp.Evaluate(`[...document.querySelectorAll('#compare tr.cmp-row[data-id="`+n.ID+`"] td')].map(td => td.textContent.trim())`, &cells),
	)
	if !slices.Contains(cells, "NaN") {
		t.Fatalf("the NaN run's row %q does not show its last loss as NaN", cells)
	}
}

// A run page charts the machine's use (sys/) beside the run's metrics and
// shows what ran.
func TestBrowserRunPageMachine(t *testing.T) {
	e := startEnv(t)
	ctx := browser(t)
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Command: []string{"sh", "-c", "sleep 2.5"}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.c.Wait(context.Background(), r.ID, time.Minute); err != nil {
		t.Fatal(err)
	}
	run(t, ctx,
		chromedp.Navigate(e.url+"#/run/"+r.ID),
		chromedp.WaitVisible(`#sys-charts .sys-chart[data-metric="sys/rss_mib"] canvas`, chromedp.ByQuery),
		chromedp.WaitVisible(`#what-ran`, chromedp.ByQuery),
	)
}
