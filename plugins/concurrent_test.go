package plugins

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// Run with -race: many goroutines share one Host and its pools.
func TestConcurrentCalls(t *testing.T) {
	h, logs := newTestHost(t, Config{MaxInstances: 3, PoolSize: 2}, pluginDir(t, "echo"))
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := h.NewParser()
			for i := range 20 {
				if f := h.Classify(ctx, sdk.ClassifyInput{ExitCode: 1 + i}); f == nil || f.Code != sdk.CodeNonzeroExit {
					errs <- fmt.Errorf("goroutine %d: classify = %+v", g, f)
					return
				}
				p.Feed("stdout", fmt.Sprintf("step %d", i))
			}
			p.Flush(ctx)
			if s := p.State(); s == nil || s.Step != 20 {
				errs <- fmt.Errorf("goroutine %d: state = %+v", g, s)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if t.Failed() {
		t.Log(logs)
	}
}
