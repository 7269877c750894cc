package ui

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// fill writes n ended runs into home's store (one in ten with the
// fingerprint of `python train.py`), as 100 000 past runs would be.
func fill(b *testing.B, home string, n int) string {
	ctx := context.Background()
	st, err := store.Open(daemon.StoreDir(home), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	fp := host.Fingerprint([]string{"python", "train.py"})
	t0 := time.Now().Add(-time.Duration(n) * time.Second)
	for i := range n {
		r := &store.Run{Sandbox: "process", Spec: sandbox.Spec{Command: []string{"python", "train.py", fmt.Sprint(i)}, Workdir: "/w"}, CreatedAt: t0.Add(time.Duration(i) * time.Second)}
		if i%10 == 0 {
			r.Fingerprint = fp
		}
		if err := st.CreateRun(ctx, r); err != nil {
			b.Fatal(err)
		}
		state := store.Succeeded
		if i%7 == 0 {
			state = store.Failed
		}
		if _, err := st.Transition(ctx, r.ID, store.Running, "", nil); err != nil {
			b.Fatal(err)
		}
		if _, err := st.Transition(ctx, r.ID, state, "", nil); err != nil {
			b.Fatal(err)
		}
	}
	return fp
}

// BenchmarkRuns100k: with 100 000 runs in the store, the calls behind
// `runbox ls` (default page, 20), the dashboard's runs list (200, through
// the dashboard), a plan's experience summary, and `runbox status` of a
// running run (the run and its metrics, as status asks).
// RUNBOX_BENCH_HOME puts the store on a chosen disk (filling it is fsync
// bound: tmpfs makes it quick; the reads measured do not sync).
func BenchmarkRuns100k(b *testing.B) {
	home := b.TempDir()
	if d := os.Getenv("RUNBOX_BENCH_HOME"); d != "" {
		var err error
		if home, err = os.MkdirTemp(d, "rbb"); err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { os.RemoveAll(home) })
	}
	fp := fill(b, home, 100_000)
	ctx := context.Background()

	st, err := store.Open(daemon.StoreDir(home), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("experience", func(b *testing.B) {
		for b.Loop() {
			if x, err := st.Experience(ctx, fp, 20); err != nil || x.Runs == 0 {
				b.Fatal(x, err)
			}
		}
	})
	st.Close()

	e := startEnvIn(b, home)
	live := e.train(b, "live", 100000, "0.05")
	for {
		r, err := e.c.Get(ctx, live.ID)
		if err == nil && r.Progress != nil && r.Progress.Step > 3 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Run("ls-default-page", func(b *testing.B) {
		for b.Loop() {
			if runs, err := e.c.List(ctx, url.Values{"limit": {"20"}}); err != nil || len(runs) != 20 {
				b.Fatal(len(runs), err)
			}
		}
	})
	b.Run("dashboard-runs-list", func(b *testing.B) {
		req, _ := http.NewRequest("GET", e.base()+"/api/runs", nil)
		req.Header.Set(tokenHeader, e.srv.token)
		for b.Loop() {
			resp, err := http.DefaultClient.Do(req)
			if err != nil || resp.StatusCode != 200 {
				b.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	})
	b.Run("status-running", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.c.Get(ctx, live.ID); err != nil {
				b.Fatal(err)
			}
			if _, err := e.c.Metrics(ctx, live.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRunPageFirstChart: a run whose loss has 10⁶ samples (written
// to its store as the runner would have, so that every sample counts: a run
// printing 10⁶ lines in a burst has most of them skipped by the parser);
// the time from opening its page in headless Chromium to its chart drawn.
func BenchmarkRunPageFirstChart(b *testing.B) {
	home := b.TempDir()
	ctx := context.Background()
	st, err := store.Open(daemon.StoreDir(home), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	r := &store.Run{Sandbox: "process", Spec: sandbox.Spec{Command: []string{"python", "train.py"}, Workdir: "/w"}}
	if err := st.CreateRun(ctx, r); err != nil {
		b.Fatal(err)
	}
	for _, s := range []store.State{store.Running, store.Succeeded} {
		if _, err := st.Transition(ctx, r.ID, s, "", nil); err != nil {
			b.Fatal(err)
		}
	}
	h := &store.MetricHistory{RunID: r.ID}
	t0 := time.Now()
	for i := int64(1); i <= 1_000_000; i++ {
		h.Add("loss", i, t0.Add(time.Duration(i)*time.Millisecond), 2/math.Sqrt(float64(i)))
	}
	if err := st.PutMetrics(ctx, h); err != nil {
		b.Fatal(err)
	}
	st.Close()
	e := startEnvIn(b, home)
	m, err := e.c.Metrics(ctx, r.ID, "loss")
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("loss: %d samples kept as %d points", m.Series[0].Total, len(m.Series[0].Step))
	bctx := browserB(b)
	if err := chromedp.Run(bctx, chromedp.Navigate(e.url)); err != nil { // sets the cookie
		b.Fatal(err)
	}
	for b.Loop() {
		if err := chromedp.Run(bctx,
			chromedp.Navigate("about:blank"),
			chromedp.Navigate(e.base()+"/#/run/"+r.ID),
			chromedp.WaitVisible(`.chart[data-metric="loss"] canvas`),
		); err != nil {
			b.Fatal(err)
		}
	}
}
