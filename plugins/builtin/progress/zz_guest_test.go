package progress_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin/progress"
)

func TestGuestCost(t *testing.T) {
	wasm := os.Getenv("GUEST_WASM")
	if wasm == "" {
		t.Skip()
	}
	ctx := context.Background()
	h, err := plugins.NewHost(ctx, plugins.Config{Files: []string{wasm}, NoBuiltins: true})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close(ctx)
	mix := progress.SyntheticMix(10000)
	samples := []string{
		"2024-05-17 10:00:01,123 INFO trainer: will save a checkpoint every 500 steps 1234",
	}
	seen := map[int]bool{}
	for i, l := range mix {
		if len(samples) > 12 {
			break
		}
		_ = i
		for k := 0; k < 10; k++ {
			if !seen[k] && len(l) > 5 && progressKind(l) == k {
				seen[k] = true
				samples = append(samples, l)
			}
		}
	}
	const n = 2560
	// overhead: a line passing the prefilter trivially
	for _, l := range samples {
		best := time.Hour
		for r := 0; r < 3; r++ {
			p := h.NewParser()
			t0 := time.Now()
			for i := 0; i < n; i++ {
				p.Feed("stdout", l)
			}
			p.Flush(ctx)
			if d := time.Since(t0); d < best {
				best = d
			}
		}
		fmt.Printf("%7.2f us/line  %.70q\n", float64(best.Microseconds())/n, l)
	}
	best := time.Hour
	for r := 0; r < 5; r++ {
		p := h.NewParser()
		t0 := time.Now()
		for _, l := range mix {
			p.Feed("stdout", l)
		}
		p.Flush(ctx)
		if d := time.Since(t0); d < best {
			best = d
		}
	}
	fmt.Printf("mix: %.0f lines/s (%v per 10k)\n", float64(len(mix))/best.Seconds(), best)
}

var kinds = []string{"Epoch 3:  ", " 45%|", "##PROGRESS##", "[=====", "Step ", "{'loss'", "Iter ", "]\ttrain", "Epoch(train)", "Training:"}

func progressKind(l string) int {
	for i, k := range kinds {
		if len(l) >= len(k) && contains(l, k) {
			return i
		}
	}
	return -1
}

func contains(s, sub string) bool {
	for i := 0; i+len(sub) <= len(s); i++ {
		if s[i:i+len(sub)] == sub {
			return true
		}
	}
	return false
}
