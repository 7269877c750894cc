package plugins

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/plugins/prefilter"
	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
)

// benchMix is the benchmark input of both sides: a deterministic realistic
// log mix, ~1% progress lines (about 6% contain a progress prefilter
// literal, 1.25% pass the prefilter once its confirm entries are applied).
func benchMix() []string { return progress.SyntheticMix(10000) }

func builtinHost(b *testing.B, cfg Config) *Host {
	cfg.Logger = nil
	cfg.Builtins = builtins()
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	if p := h.NewParser(); true {
		p.Ready(context.Background()) // load before the timed loop
	}
	return h
}

// BenchmarkProgressWasm: lines/s of a run's output through the built-in
// progress plugin as the engine drives it: a Parser per run, host-side
// prefilter, batches, call timeouts on (close on context done, the
// headline) and off. Compare with BenchmarkProgressNative (same input, same
// work done natively).
//
//	go test ./plugins -run '^$' -bench 'Progress(Wasm|Native)' -count 5
func BenchmarkProgressWasm(b *testing.B) {
	for _, interrupt := range []bool{true, false} {
		b.Run(fmt.Sprintf("interrupt=%v", interrupt), func(b *testing.B) {
			h := builtinHost(b, Config{noInterrupt: !interrupt})
			m := h.byKind(context.Background(), sdk.KindProgress)[0]
			lines := benchMix()
			calls0 := m.breaker.snapshot().calls
			for b.Loop() {
				p := h.NewParser()
				for _, l := range lines {
					p.Feed("stdout", l)
				}
				p.Flush(context.Background())
				if p.State() == nil {
					b.Fatal("no progress")
				}
			}
			calls := m.breaker.snapshot().calls
			b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
			b.ReportMetric(float64(calls-calls0)/float64(b.N)*10000/float64(len(lines)), "calls/10k-lines")
		})
	}
}

// BenchmarkProgressNative: the same input parsed by the Go package
// directly. "prefiltered" does the host's work natively: the same
// prefilter, the same batches (BatchLines/BatchBytes of matching lines,
// the rest on flush), the state threaded through Last. "all-lines" sends
// every line in batches of 256 (Parse applies its own prefilter).
func BenchmarkProgressNative(b *testing.B) {
	lines := benchMix()
	cfg := Config{}.withDefaults()
	run := func(b *testing.B, filter *prefilter.Filter) {
		for b.Loop() {
			var st sdk.Progress
			updated := false
			var batch []string
			bytes := 0
			send := func() {
				in := sdk.ParseInput{Lines: batch}
				if updated {
					last := st
					in.Last = &last
				}
				for _, u := range progress.Parse(in).Updates {
					st.Merge(u)
					updated = true
				}
				batch, bytes = batch[:0], 0
			}
			for _, l := range lines {
				if filter != nil && !filter.Match(l) {
					continue
				}
				batch = append(batch, l)
				bytes += len(l)
				if len(batch) >= cfg.BatchLines || bytes >= cfg.BatchBytes {
					send()
				}
			}
			if len(batch) > 0 {
				send()
			}
			if !updated {
				b.Fatal("no progress")
			}
		}
		b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
	}
	full, errs := prefilter.New(progress.Manifest.Prefilter, progress.Manifest.PrefilterConfirm)
	if len(errs) > 0 {
		b.Fatal(errs)
	}
	b.Run("prefiltered", func(b *testing.B) { run(b, full) })
	b.Run("all-lines", func(b *testing.B) { run(b, nil) })
}

// BenchmarkCompile: cold compile vs a load from the compilation cache of
// the progress module; "cached-analyze" loads progress and classify from
// the cache side by side, as `runbox analyze` does. A load from the cache
// still validates and decodes the whole module, so its time follows the
// module's size (MB).
//
//	go test ./plugins -run '^$' -bench 'Compile/cached' -benchtime 20x -count 3
func BenchmarkCompile(b *testing.B) {
	mods := builtin.Modules()
	wasm := mods[1].Wasm // progress
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			r := wazero.NewRuntime(ctx)
			if _, err := r.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			r.Close(ctx)
		}
		b.ReportMetric(float64(len(wasm))/1e6, "MB")
	})
	cached := func(b *testing.B, wasms ...[]byte) {
		cache, _ := wazero.NewCompilationCacheWithDir(b.TempDir())
		defer cache.Close(ctx)
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		size := 0
		for _, w := range wasms {
			r.CompileModule(ctx, w) // fill the cache
			size += len(w)
		}
		r.Close(ctx)
		for b.Loop() {
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
			errs := make(chan error, len(wasms))
			for _, w := range wasms {
				go func() {
					_, err := r.CompileModule(ctx, w)
					errs <- err
				}()
			}
			for range wasms {
				if err := <-errs; err != nil {
					b.Fatal(err)
				}
			}
			r.Close(ctx)
		}
		b.ReportMetric(float64(size)/1e6, "MB")
	}
	b.Run("cached", func(b *testing.B) { cached(b, wasm) })
	b.Run("cached-analyze", func(b *testing.B) { cached(b, wasm, mods[2].Wasm) })
}

// BenchmarkInstanceMemory: host memory per pooled instance of the built-in
// progress plugin (Go heap + guest linear memory).
func BenchmarkInstanceMemory(b *testing.B) {
	h := builtinHost(b, Config{})
	m := h.byKind(context.Background(), sdk.KindProgress)[0]
	const n = 8
	for b.Loop() {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ins := make([]*instance, n)
		for i := range ins {
			in, err := m.instantiate(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			ins[i] = in
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.Sys-before.Sys+after.HeapInuse-before.HeapInuse)/n/(1<<20), "MiB/instance")
		b.ReportMetric(float64(ins[0].memBytes())/(1<<20), "MiB-linear/instance")
		for _, in := range ins {
			in.close()
		}
	}
}

// BenchmarkClassify: one classify call on a small log through the built-ins.
func BenchmarkClassify(b *testing.B) {
	h := builtinHost(b, Config{CallTimeout: 5 * time.Second})
	in := sdk.ClassifyInput{ExitCode: 1, Limits: sdk.Limits{}, StderrTail: strings.Join([]string{
		"Traceback (most recent call last):",
		`  File "train.py", line 3, in <module>`,
		"    import torchvision",
		"ModuleNotFoundError: No module named 'torchvision'",
	}, "\n")}
	h.Classify(context.Background(), in)
	for b.Loop() {
		h.Classify(context.Background(), in)
	}
}

// BenchmarkProgressGuest: the cost inside the guest of one line of each
// class, with call timeouts on and off: batches of up to 256 lines of one
// class go straight to runbox_parse, encoded as the Parser encodes them.
// "progress" are the mix's progress lines; "literal-only" the mix's other
// lines that contain a prefilter literal (what a host that ignores
// prefilter_confirm sends); "empty" a batch of one empty line (the fixed
// cost of a call).
func BenchmarkProgressGuest(b *testing.B) {
	mix := benchMix()
	var prog, other []string
	lits, _ := prefilter.New(progress.Manifest.Prefilter, nil)
	for _, l := range mix {
		if len(progress.Parse(sdk.ParseInput{Lines: []string{l}}).Updates) > 0 {
			prog = append(prog, l)
		} else if lits.Match(l) {
			other = append(other, l)
		}
	}
	for _, interrupt := range []bool{true, false} {
		h := builtinHost(b, Config{noInterrupt: !interrupt})
		m := h.byKind(context.Background(), sdk.KindProgress)[0]
		for _, c := range []struct {
			name  string
			lines []string
		}{{"progress", prog}, {"literal-only", other}, {"empty", []string{""}}} {
			batch := c.lines[:min(256, len(c.lines))]
			in, err := sdk.ParseInput{Lines: batch}.AppendJSONNoEscapeHTML(nil)
			if err != nil {
				b.Fatal(err)
			}
			b.Run(fmt.Sprintf("interrupt=%v/%s", interrupt, c.name), func(b *testing.B) {
				for b.Loop() {
					var out sdk.ParseOutput
					if _, err := h.invoke(context.Background(), m, exportParse, encodedInput(in), &out); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(b.N*len(batch)), "ns/line")
			})
		}
	}
}
