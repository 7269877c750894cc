package plugins

import (
	"context"
	"fmt"
	"testing"
	"time"
)

func BenchmarkTmpPerLine(t *testing.B) {
	h := builtinHost(t, Config{})
	cases := []string{
		"2024-05-17 10:00:01,123 INFO trainer: will save a checkpoint every 500 steps 1234",
		"Epoch 3:  5/1000 |████▌     | [00:10<00:12, 4.50it/s, loss=0.123, v_num=0]",
		" 45%|████▌     | 5/1000 [00:10<00:12,  4.50it/s]",
		"##PROGRESS## {\"step\": 5, \"total\": 1000, \"phase\": \"train\"}",
		"5/1000 [==============>...............] - ETA: 12s - loss: 0.1234 - accuracy: 0.9500",
		"Step 5/1000 loss=0.52 lr=0.001",
		"{'loss': 0.4321, 'grad_norm': 1.2, 'learning_rate': 4.5e-05, 'epoch': 0.5} 5 1000",
		"Iter 5: Train loss 2.345, Learning Rate 1.000e-05, It/sec 1.234, Tokens/sec 567.8, Trained Tokens 1000, Peak mem 5.678 GB",
		"[5]\ttrain-rmse:0.12345\teval-rmse:0.23456 1000",
		"Epoch(train)  [1][5/1000]  lr: 1.0000e-02  eta: 0:10:00  time: 0.5  loss: 1.2",
		"Training:  45%|████▌     | 5/1000 [00:10<00:12, 4.50it/s]",
	}
	for _, c := range cases {
		lines := make([]string, 2560)
		for i := range lines {
			lines[i] = c
		}
		best := time.Hour
		for r := 0; r < 3; r++ {
			p := h.NewParser()
			t0 := time.Now()
			for _, l := range lines {
				p.Feed("stdout", l)
			}
			p.Flush(context.Background())
			if d := time.Since(t0); d < best {
				best = d
			}
		}
		fmt.Printf("%8.2f us  %.40q\n", float64(best.Microseconds())/float64(len(lines)), c)
	}
}
