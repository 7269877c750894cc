package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/store"
)

// startDaemonWithPlugins is startDaemon with the built-in plugins loaded,
// so that runs have progress and metrics.
func startDaemonWithPlugins(t *testing.T) *testDaemon {
	d, stop := startPluginDaemonIn(t, t.TempDir())
	t.Cleanup(stop)
	return d
}

// startPluginDaemonIn starts a daemon with plugins on home; stop ends it
// (its runs go on: their supervisors own them).
func startPluginDaemonIn(t *testing.T, home string) (*testDaemon, func()) {
	t.Helper()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	judge := host.NewPluginJudge(func(ctx context.Context) (*plugins.Host, error) {
		var bs []plugins.Builtin
		for _, m := range builtin.Modules() {
			bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
		}
		return plugins.NewHost(ctx, plugins.Config{Builtins: bs, CacheDir: filepath.Join(os.TempDir(), "runbox-daemon-test-wazero"), Logger: log})
	}, time.Minute, log)
	d, stop := serveDaemon(t, home, judge)
	return d, func() {
		stop()
		judge.Close()
	}
}

// A run printing loss and accuracy has both series, every step kept (a
// short run is not downsampled), from the store once it ended; a name it
// does not have lists those it has; a run with no metrics has none.
func TestMetricsOverTheAPI(t *testing.T) {
	d := startDaemonWithPlugins(t)
	ctx := context.Background()
	// A short pause between steps, as a training step has: the reader
	// catches up after each line and the plugin answers each on its own.
	// (Lines printed in one burst reach the plugin as one batch, answered
	// with at most 64 updates: TestMetricsOfABurstKeepTheirShape.)
	// A first run loads the progress plugin: lines printed while it loads
	// wait in a bounded backlog.
	d.wait(t, d.run(t, "sh", "-c", `echo '##PROGRESS## {"step": 1}'`).ID)
	script := `for i in 1 2 3 4 5 6 7 8; do echo "##PROGRESS## {\"step\": $i, \"total\": 8, \"metrics\": {\"loss\": $(( 100 / i )), \"acc\": 0.$i}}"; sleep 0.2; done`
	r := d.run(t, "sh", "-c", script)
	if got := d.wait(t, r.ID); got.State != "succeeded" {
		t.Fatalf("run %s", got.State)
	}
	m, err := d.c.Metrics(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Names, ",") != "acc,loss,progress/percent" {
		t.Fatalf("names %v", m.Names)
	}
	m, err = d.c.Metrics(ctx, r.ID, "loss")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Series) != 1 || m.Series[0].Name != "loss" {
		t.Fatalf("series %+v", m.Series)
	}
	s := m.Series[0]
	if len(s.Step) != 8 || s.Total != 8 || s.Span != 1 {
		t.Fatalf("loss: steps %v, total %d, span %d; want the 8 steps", s.Step, s.Total, s.Span)
	}
	for i, want := range []float64{100, 50, 33, 25, 20, 16, 14, 12} {
		if s.Step[i] != int64(i+1) || float64(s.Value[i]) != want {
			t.Fatalf("point %d: step %d value %v, want %d %v", i, s.Step[i], s.Value[i], i+1, want)
		}
	}

	_, err = d.c.Metrics(ctx, r.ID, "nope")
	var ae *client.Error
	if !errors.As(err, &ae) || ae.Status != 400 || !strings.Contains(ae.Msg, "acc, loss") {
		t.Fatalf("unknown metric: %v", err)
	}

	plain := d.run(t, "true")
	d.wait(t, plain.ID)
	m, err = d.c.Metrics(ctx, plain.ID)
	if err != nil || len(m.Series) != 0 || len(m.Names) != 0 {
		t.Fatalf("a run with no metrics: %+v, %v", m, err)
	}
	if code, _ := d.raw(t, "GET", "/v1/runs/"+url.PathEscape("zzzz")+"/metrics", ""); code != 404 {
		t.Fatalf("unknown run: %d", code)
	}
}

// A daemon restarted while a run goes on re-attaches to it: the history
// goes on from what was stored, each step once, none lost.
func TestMetricsSurviveDaemonRestart(t *testing.T) {
	home := t.TempDir()
	d, stop := startPluginDaemonIn(t, home)
	t.Cleanup(stop)
	ctx := context.Background()
	d.wait(t, d.run(t, "sh", "-c", `echo '##PROGRESS## {"step": 1}'`).ID) // loads the plugin
	script := `for i in $(seq 1 16); do echo "##PROGRESS## {\"step\": $i, \"total\": 16, \"metrics\": {\"loss\": $i}}"; sleep 0.25; done`
	r := d.run(t, "sh", "-c", script)
	for {
		m, err := d.c.Metrics(ctx, r.ID, "loss")
		if err == nil && len(m.Series) == 1 && len(m.Series[0].Step) >= 5 {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(1100 * time.Millisecond) // the runner stores history once a second
	stop()
	d2, stop2 := startPluginDaemonIn(t, home)
	t.Cleanup(stop2)
	if got := d2.wait(t, r.ID); got.State != "succeeded" {
		t.Fatalf("run %s", got.State)
	}
	m, err := d2.c.Metrics(ctx, r.ID, "loss")
	if err != nil {
		t.Fatal(err)
	}
	s := m.Series[0]
	for i := 1; i < len(s.Step); i++ {
		if s.Step[i] <= s.Step[i-1] {
			t.Fatalf("steps %v: not increasing (a step recorded twice)", s.Step)
		}
	}
	if s.Step[0] != 1 || s.Step[len(s.Step)-1] != 16 {
		t.Fatalf("steps %v: want 1 to 16", s.Step)
	}
}

// NaN and ±Inf reach clients as "NaN", "Infinity", "-Infinity" (JSON has
// no such numbers), kind and sign kept, counted per point; a point with no
// finite sample has null min and max. A history with none says nothing of
// them (no non_finite column).
func TestMetricsViewNonFinite(t *testing.T) {
	h := &store.MetricHistory{RunID: "r"}
	for i, v := range []float64{1, math.NaN(), math.Inf(1), 2, math.Inf(-1)} {
		h.Add("loss", int64(i+1), time.Unix(100, 0), v)
	}
	h.Add("acc", 1, time.Unix(100, 0), 0.5)
	v := metricsView(&store.Run{ID: "r", State: store.Running}, h, h.Names())
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("a history with non-finite values does not encode: %v", err)
	}
	for _, want := range []string{
		`"value":[1,"NaN","Infinity",2,"-Infinity"]`, `"min":[1,null,null,2,null]`, `"non_finite":[0,1,1,0,1]`,
		`{"name":"acc","total":1,"span":1,"step":[1],"time":[100],"value":[0.5],"min":[0.5],"max":[0.5]}`,
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("view lacks %s: %s", want, b)
		}
	}
}
