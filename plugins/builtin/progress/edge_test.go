package progress

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/runbox/runbox/sdk"
)

type m = map[string]float64

// edgeCases: lines in, final merged state out (nil: no update at all).
var edgeCases = []struct {
	name  string
	lines []string
	want  *sdk.Progress
}{
	{"tqdm s/it", []string{"Processing: 20%|██        | 2/10 [00:09<00:36,  4.52s/it]"},
		&sdk.Progress{Step: 2, Total: 10, Percentage: 20, Phase: "Processing", ETASeconds: 36, Rate: 4.52, RateUnit: "s/it", Source: "tqdm"}},
	{"tqdm ascii bar", []string{"train: 45%|####5     | 45/100 [01:02:03<1:00:00, 4.50it/s]"},
		&sdk.Progress{Step: 45, Total: 100, Percentage: 45, Phase: "train", ETASeconds: 3600, Rate: 4.5, RateUnit: "it/s", Source: "tqdm"}},
	{"tqdm wrapped mid-bar", []string{"Epoch 4:  45%|████▌     | 45/1"},
		&sdk.Progress{Percentage: 45, Phase: "train", Epoch: 4, Source: "tqdm"}},
	{"tqdm wrapped tail keeps the loss", []string{"0,  4.20it/s, loss=0.90]"},
		&sdk.Progress{Metrics: m{"loss": 0.9}, Source: "generic"}},
	{"tqdm redraws on one line", []string{"a: 10%|█         | 1/10 [00:01<00:09, 1.00it/s]a: 20%|██        | 2/10 [00:02<00:08, 1.00it/s]"},
		&sdk.Progress{Step: 2, Total: 10, Percentage: 20, Phase: "a", ETASeconds: 8, Rate: 1, RateUnit: "it/s", Source: "tqdm"}},
	// A download is not the job's main work (issue #15): no progress.
	{"tqdm unit_scale bytes", []string{"Downloading: 100%|██████████| 1.00G/1.00G [00:20<00:00, 50.0MB/s]"}, nil},
	{"a record reader's bar (no description, no total, 10k+ it/s) is not training", []string{
		"84it [00:00, 23512.40it/s]"}, nil},
	{"a bar done within its first second at 10k+ it/s is a pass over data", []string{
		"100%|██████████| 84/84 [00:00<00:00, 60512.40it/s]"}, nil},
	{"a long loop that fast keeps its bar", []string{
		"100%|██████████| 2000000/2000000 [02:40<00:00, 12500.00it/s]"},
		&sdk.Progress{Step: 2000000, Total: 2000000, Percentage: 100, Rate: 12500, RateUnit: "it/s", Source: "tqdm"}},
	{"an unknown-total training bar at a training rate still counts", []string{"1234it [05:00, 4.11it/s]"},
		&sdk.Progress{Step: 1234, Rate: 4.11, RateUnit: "it/s", Source: "tqdm"}},
	{"download bar then the training bar", []string{
		"model.safetensors:  64%|██████▍   | 351M/548M [00:07<00:04, 48.0MB/s]",
		"Loading checkpoint shards: 100%|██████████| 2/2 [00:03<00:00,  1.50s/it]",
		"  3%|▎         | 30/1000 [00:10<05:23,  3.00it/s]",
		"Validation DataLoader 0: 100%|██████████| 20/20 [00:01<00:00, 15.0it/s]"},
		&sdk.Progress{Step: 30, Total: 1000, Percentage: 3, ETASeconds: 323, Rate: 3, RateUnit: "it/s", Source: "tqdm"}},
	{"tqdm nested outer only", []string{"Epoch:  40%|████      | 2/5 [02:00<03:00, 60.0s/it]"},
		&sdk.Progress{Percentage: 40, Epoch: 2, EpochTotal: 5, ETASeconds: 180, Rate: 60, RateUnit: "s/it", Source: "tqdm"}},
	{"tqdm nested outer after inner keeps inner step", []string{
		"Batches:  50%|█████     | 50/100 [00:05<00:05, 10.0it/s]",
		"Epochs:  40%|████      | 2/5 [02:00<03:00, 60.0s/it]"},
		&sdk.Progress{Step: 50, Total: 100, Percentage: 50, Phase: "Batches", Epoch: 2, EpochTotal: 5, ETASeconds: 5, Rate: 10, RateUnit: "it/s", Source: "tqdm"}},
	{"tqdm desc Epoch n/m", []string{"Epoch 3/10: 100%|██████████| 391/391 [00:30<00:00, 12.9it/s, acc=0.91]"},
		&sdk.Progress{Step: 391, Total: 391, Percentage: 100, Phase: "train", Epoch: 3, EpochTotal: 10, Rate: 12.9, RateUnit: "it/s", Metrics: m{"acc": 0.91}, Source: "tqdm"}},
	{"tqdm percentage over 100 refused", []string{"weird: 150%|██████████| 15/10 [00:01<00:00]"}, nil},
	{"keras ETA minutes", []string{" 12/500 [..............................] - ETA: 1:23 - loss: 0.9"},
		&sdk.Progress{Step: 12, Total: 500, Percentage: 2.4, ETASeconds: 83, Metrics: m{"loss": 0.9}, Source: "keras"}},
	{"keras verbose 2", []string{"Epoch 3/10", "1875/1875 - 4s - loss: 0.0712 - accuracy: 0.9780 - 4s/epoch - 2ms/step"},
		&sdk.Progress{Step: 1875, Total: 1875, Percentage: 100, Epoch: 3, EpochTotal: 10, Rate: 2, RateUnit: "ms/step", Metrics: m{"loss": 0.0712, "accuracy": 0.978}, Source: "keras"}},
	{"tf1 keras us/sample", []string{"60000/60000 [==============================] - 5s 83us/sample - loss: 0.2"},
		&sdk.Progress{Step: 60000, Total: 60000, Percentage: 100, Rate: 83, RateUnit: "us/sample", Metrics: m{"loss": 0.2}, Source: "keras"}},
	{"hf nan kept, zero kept", []string{"{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1e-05, 'epoch': 2.0}"},
		&sdk.Progress{Phase: "train", Epoch: 2, Metrics: m{"loss": 0, "grad_norm": math.NaN(), "learning_rate": 1e-5, "epoch": 2}, Source: "huggingface"}},
	{"hf final", []string{"{'train_runtime': 301.2, 'train_samples_per_second': 79.7, 'train_steps_per_second': 4.98, 'train_loss': 0.41, 'epoch': 3.0}"},
		&sdk.Progress{Phase: "done", Epoch: 3, Metrics: m{"train_runtime": 301.2, "train_samples_per_second": 79.7, "train_steps_per_second": 4.98, "train_loss": 0.41, "epoch": 3}, Source: "huggingface"}},
	{"mlx total then iter", []string{"Starting training..., iters: 200", "Iter 50: Train loss 1.5, Learning Rate 1.000e-05, It/sec 2.0, Tokens/sec 800.0, Trained Tokens 4000, Peak mem 4.000 GB"},
		&sdk.Progress{Step: 50, Total: 200, Percentage: 25, Phase: "train", Rate: 2, RateUnit: "it/s", Metrics: m{"train_loss": 1.5, "learning_rate": 1e-5, "tokens_per_sec": 800, "trained_tokens": 4000, "peak_mem_gb": 4}, Source: "mlx"}},
	{"xgb cv mean+std", []string{"[3]\ttrain-rmse:8.123+0.012\ttest-rmse:8.456+0.101"},
		&sdk.Progress{Step: 3, Metrics: m{"train-rmse": 8.123, "test-rmse": 8.456}, Source: "xgboost"}},
	{"lightgbm info is not progress", []string{"[LightGBM] [Info] Start training from score 0.5", "[LightGBM] [Warning] No further splits with positive gain"}, nil},
	{"fastai row without header", []string{"4         0.301234    0.250000    00:15     "},
		&sdk.Progress{Phase: "train", Epoch: 4, Metrics: m{"train_loss": 0.301234, "valid_loss": 0.25}, Source: "fastai"}},
	{"fastai header from Last", []string{"epoch     train_loss  valid_loss  f1_score  time", "3         0.2         0.3         0.8       01:02"},
		&sdk.Progress{Phase: "train", Epoch: 3, Message: "fastai columns: epoch train_loss valid_loss f1_score time", Metrics: m{"train_loss": 0.2, "valid_loss": 0.3, "f1_score": 0.8}, Source: "fastai"}},
	{"fastprogress bar", []string{"|████████████--------| 60.00% [60/100 00:30<00:20 0.4321]"},
		&sdk.Progress{Step: 60, Total: 100, Percentage: 60, ETASeconds: 20, Source: "fastai"}},
	{"mmengine iter based", []string{"Iter(train) [  50/1000]  lr: 1.0000e-02  eta: 0:10:00  time: 0.5000  loss: 1.2000"},
		&sdk.Progress{Step: 50, Total: 1000, Percentage: 5, Phase: "train", ETASeconds: 600, Metrics: m{"lr": 0.01, "time": 0.5, "loss": 1.2}, Source: "mmcv"}},
	{"generic epoch of", []string{"INFO: epoch 3 of 10, batch 7/50, loss: 0.25"},
		&sdk.Progress{Step: 7, Total: 50, Percentage: 14, Epoch: 3, EpochTotal: 10, Metrics: m{"loss": 0.25}, Source: "generic"}},
	{"generic bracket epoch", []string{"Epoch [2/5], Step [100/600], Loss: 0.2345"},
		&sdk.Progress{Step: 100, Total: 600, Percentage: 100.0 / 6, Epoch: 2, EpochTotal: 5, Metrics: m{"Loss": 0.2345}, Source: "generic"}},
	{"generic loss only", []string{"2024-01-02 10:00:00 val_loss: 0.1234"},
		&sdk.Progress{Metrics: m{"val_loss": 0.1234}, Source: "generic"}},
	{"generic global_step is not step", []string{"restoring global_step=500 and steps_per_epoch=100"}, nil},
	{"runbox after timestamp, percentage computed", []string{"12:00:01 ##PROGRESS## {\"step\": 3, \"total\": 4}"},
		&sdk.Progress{Step: 3, Total: 4, Percentage: 75, Source: "runbox"}},
	{"runbox percentage over 100 dropped", []string{"##PROGRESS## {\"percentage\": 250, \"phase\": \"x\"}"},
		&sdk.Progress{Phase: "x", Source: "runbox"}},
	{"ansi and crlf", []string{"\x1b[2K\x1b[1G\x1b[32mStep 5/10\x1b[0m loss=1.5\r"},
		&sdk.Progress{Step: 5, Total: 10, Percentage: 50, Metrics: m{"loss": 1.5}, Source: "generic"}},
	{"markdown quote", []string{"> > Step 5/10"},
		&sdk.Progress{Step: 5, Total: 10, Percentage: 50, Source: "generic"}},
	{"garbage: dates versions ips", []string{
		"2024/01/02 12:00:00 starting",
		"Installing package 1.2.3/4 from 192.168.1.10/24",
		"[11/22 10:00:00 d2.engine]: step through",
		"GPU util 150%, Progress: 250%",
		"Step 1: Install dependencies/requirements",
		"see https://example.com/step/45/100",
	}, nil},
}

func TestEdgeCases(t *testing.T) {
	opt := cmp.Options{cmpopts.EquateApprox(0, 1e-9), cmpopts.EquateNaNs()}
	for _, c := range edgeCases {
		t.Run(c.name, func(t *testing.T) {
			var got *sdk.Progress
			for _, l := range c.lines {
				for _, u := range Parse(sdk.ParseInput{Lines: []string{l}, Last: got}).Updates {
					if got == nil {
						got = &sdk.Progress{}
					}
					got.Merge(u)
				}
			}
			if diff := cmp.Diff(c.want, got, opt); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// Random bytes read as lines never make up a progress bar (issue #11),
// even where they happen to hold a prefilter literal and digits.
func TestBinaryIsNotProgress(t *testing.T) {
	x := uint32(2463534242)
	next := func() byte {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		return byte(x)
	}
	for n := 0; n < 2000; n++ {
		b := make([]byte, 40+n%200)
		for i := range b {
			b[i] = next()
		}
		// plant what a parser would look for in the noise
		copy(b[len(b)/2:], " 45%|████▌| 45/100 [00:10<00:12, 4.50it/s] loss=0.5 Epoch 3/10 ")
		if out := Parse(sdk.ParseInput{Lines: []string{string(b)}}); len(out.Updates) > 0 {
			t.Fatalf("binary line %q yields %+v", b, out.Updates)
		}
	}
}
