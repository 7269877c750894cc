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
	"github.com/runbox/runbox/sdk"
	"github.com/tetratelabs/wazero"
)

// benchLines is a realistic mix: ~1% progress lines among ordinary logs.
func benchLines(n int) []string {
	progressLines := []string{
		`##PROGRESS## {"step": 3, "total": 5, "phase": "train", "percentage": 60}`,
		` 45%|████▌     | 450/1000 [00:12<00:15, 36.50it/s]`,
		`Epoch 2/10`,
		`120/500 [======>.......................] - ETA: 12s - loss: 0.4321 - accuracy: 0.8812`,
	}
	ordinary := []string{
		"INFO 2024-05-01 12:00:01 loading shard 17 of 64 from /data/train-00017.parquet",
		"WARNING: tokenizer has no pad token, using eos",
		"DEBUG cache hit for key=embeddings/layer.3 size=4096",
		"[rank0] allreduce bucket 12 ready",
	}
	out := make([]string, n)
	for i := range out {
		if i%100 == 0 {
			out[i] = progressLines[(i/100)%len(progressLines)]
		} else {
			out[i] = ordinary[i%len(ordinary)]
		}
	}
	return out
}

func builtinHost(b *testing.B, cfg Config) *Host {
	cfg.Logger = nil
	h, err := NewHost(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	if p := h.NewParser(); true {
		p.Flush(context.Background()) // load
	}
	return h
}

// BenchmarkProgressWasm: lines/s through the built-in progress plugin, with
// prefilter and batching, call timeouts on (close on context done).
func BenchmarkProgressWasm(b *testing.B) {
	for _, interrupt := range []bool{true, false} {
		b.Run(fmt.Sprintf("interrupt=%v", interrupt), func(b *testing.B) {
			h := builtinHost(b, Config{noInterrupt: !interrupt})
			lines := benchLines(10000)
			b.ResetTimer()
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
			b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
		})
	}
}

// BenchmarkProgressNative: the same lines parsed by the Go package directly,
// in the same batches as the host would send (no prefilter).
func BenchmarkProgressNative(b *testing.B) {
	lines := benchLines(10000)
	for b.Loop() {
		var st sdk.Progress
		for i := 0; i < len(lines); i += 256 {
			last := st
			out := progress.Parse(sdk.ParseInput{Lines: lines[i:min(i+256, len(lines))], Last: &last})
			for _, u := range out.Updates {
				st.Merge(u)
			}
		}
	}
	b.ReportMetric(float64(b.N*len(lines))/b.Elapsed().Seconds(), "lines/s")
}

// BenchmarkCompile: cold compile vs a load from the compilation cache.
func BenchmarkCompile(b *testing.B) {
	wasm := builtin.Modules()[1].Wasm
	ctx := context.Background()
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			r := wazero.NewRuntime(ctx)
			if _, err := r.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			r.Close(ctx)
		}
	})
	b.Run("cached", func(b *testing.B) {
		cache, _ := wazero.NewCompilationCacheWithDir(b.TempDir())
		defer cache.Close(ctx)
		r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
		r.CompileModule(ctx, wasm) // fill the cache
		r.Close(ctx)
		b.ResetTimer()
		for b.Loop() {
			r := wazero.NewRuntimeWithConfig(ctx, wazero.NewRuntimeConfig().WithCompilationCache(cache))
			if _, err := r.CompileModule(ctx, wasm); err != nil {
				b.Fatal(err)
			}
			r.Close(ctx)
		}
	})
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
