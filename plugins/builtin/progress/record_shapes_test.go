package progress

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/runbox/runbox/sdk"
)

// recordShapes: record shapes with no keyword the generic reader knows
// (value before name, a value glued to the next key, a count of trees),
// the lines around them that must stay nothing, and Keras's evaluate bar
// after training. They join edgeCases,
// so TestEdgeCases, TestPrefilterCovers and the fuzzers see them.
var recordShapes = []struct {
	name  string
	lines []string
	want  *sdk.Progress
}{
	{"value first, name after, the first bare value the loss", []string{
		"12: 3.250000, 3.500000 avg, 0.001000 rate, 1.250000 seconds, 768 images"},
		&sdk.Progress{Step: 12, Phase: "train", Source: "generic", Metrics: m{"loss": 3.25, "avg_loss": 3.5, "rate": 0.001}}},
	{"value first with a loss keyword and hours left", []string{
		" 900: 1.500000, 1.750000 avg loss, 0.002000 rate, 3.5 seconds, 57600 images, 12.5 hours left"},
		&sdk.Progress{Step: 900, Phase: "train", Source: "generic", Metrics: m{"loss": 1.5, "avg_loss": 1.75, "rate": 0.002}}},
	{"name-space-value pairs among Name:value ones", []string{
		"  [Train] Epoch: [2][40/200]  Loss:0.250 (Avg 0.3000) Acc:0.8100 (Avg 0.7000) LR 2.50e-04   (AvgTime 0.9)"},
		&sdk.Progress{Step: 40, Total: 200, Percentage: 20, Epoch: 2, Phase: "train", Source: "mmcv", Metrics: m{"Loss": 0.25, "Acc": 0.81, "LR": 2.5e-4}}},
	{"an event that ends with its loss", []string{
		"Training batch 12 ends with loss 0.75.", "Training batch 13 ends with loss NaN."},
		&sdk.Progress{Step: 13, Source: "generic", Metrics: m{"loss": math.NaN()}}},
	{"prose with commas after a counter is not value-first", []string{
		"3: 12 apples, 4 pears, and more"}, nil},
	{"a value glued to the next key", []string{
		"7:\tlearn 0.4200000000passed: 3.2 sec\ttotal: 22s\tremaining: 1m 3s"},
		&sdk.Progress{Step: 7, Phase: "train", Source: "generic", Metrics: m{"learn": 0.42}}},
	{"trees built of a total beside a score", []string{
		"built tree 4 of 250, train score = 7.5e-01"},
		&sdk.Progress{Step: 4, Total: 250, Percentage: 1.6, Phase: "train", Source: "generic", Metrics: m{"train score": 0.75}}},
	{"a tree count with no metric is nothing", []string{
		"Pruning tree 4 of 250"}, nil},
	{"counts before their words, an epoch of a total", []string{
		"       2500 iter, 3 epoch / 40 epochs"},
		&sdk.Progress{Step: 2500, Epoch: 3, EpochTotal: 40, Source: "generic"}},
	{"the first epoch (0) of a total", []string{
		"         40 iter, 0 epoch / 25 epochs"},
		&sdk.Progress{Step: 40, EpochTotal: 25, Source: "generic"}},
	{"a '#' bar of the epoch with its percentage", []string{
		"this epoch [##########################........................] 52.10%"},
		&sdk.Progress{Percentage: 52.1, Source: "generic"}},
	{"a '#' bar with no epoch word is not read", []string{
		"copying [##########################........................] 52.10%"}, nil},
	{"an epoch count alone is a setting", []string{
		"training for 3 epoch / 40 epochs max"}, nil},
	{"a log dict with capitalised keys and numbers as strings, cut short", []string{
		"{'Step': 40, 'Loss': '2.7183', 'Learning Rate': '2.00e-05'"},
		&sdk.Progress{Step: 40, Phase: "train", Source: "huggingface", Metrics: m{"Loss": 2.7183, "Learning Rate": 2e-05}}},
	{"zero-padded counts before their words", []string{
		"002 epoch, 04500 iter, average time 0.5120, loss 12.5000"},
		&sdk.Progress{Step: 4500, Epoch: 2, Source: "generic", Metrics: m{"loss": 12.5}}},
	{"a step whose loss is nan is still a step", []string{
		"iter 3010: loss 2.5, time 100.5ms", "iter 3020: loss nan, time 101.2ms"},
		&sdk.Progress{Step: 3020, Source: "generic", Metrics: m{"loss": math.NaN()}}}, // and its loss is NaN now
	{"a loss among key=value pairs makes the others metrics", []string{
		"summary: kl=0.25, recon=1.5, loss=1.75"},
		&sdk.Progress{Source: "generic", Metrics: m{"kl": 0.25, "recon": 1.5, "loss": 1.75}}},
	{"a message glued to a bar's last value", []string{
		"Epoch 2/4",
		"  3/900 [..............................] - ETA: 50s - loss: 1.2500 - acc: 0.6250Stopping: loss went up"},
		&sdk.Progress{Step: 3, Total: 900, Percentage: 100.0 / 300, Epoch: 2, EpochTotal: 4, ETASeconds: 50,
			Source: "keras", Metrics: m{"loss": 1.25, "acc": 0.625}}},
	{"a unit after a value is not a glued word", []string{
		"step: 5, loss: 0.5, mem: 1.5GB, bw: 4.0Mb/s"},
		&sdk.Progress{Step: 5, Source: "generic", Metrics: m{"loss": 0.5}}},
	{"a rich bar drawn in ASCII", []string{
		"Epoch 2/9 ------------------------------ 45/100 0:00:10 • 0:00:12 4.50it/s v_num: 0 train_loss: 0.125"},
		&sdk.Progress{Step: 45, Total: 100, Percentage: 45, Phase: "train", Epoch: 2, EpochTotal: 9, ETASeconds: 12,
			Rate: 4.5, RateUnit: "it/s", Source: "lightning", Metrics: m{"train_loss": 0.125}}},
	{"dashes and a bullet without a count are not a bar", []string{
		"note ---------- see • 4.50it/s"}, nil},
	{"a pass over the data is an epoch", []string{
		"Pass: 2, Batch: 300, TrainCost: 1.25"},
		&sdk.Progress{Step: 300, Epoch: 2, Source: "generic", Metrics: m{"TrainCost": 1.25}}},
	{"a result block's iteration, and every trial ended", []string{
		"Result for objective_3f2a1_00000:",
		"  mean_reward: 12.5",
		"  training_iteration: 7",
		"Number of trials: 2/2 (2 TERMINATED)"},
		&sdk.Progress{Step: 7, Percentage: 100, Phase: "train", Source: "generic"}},
	{"trials still running have not ended", []string{
		"Number of trials: 4/4 (2 RUNNING, 2 TERMINATED)"}, nil},
	{"the counter whose total the banner announced", []string{
		"  Total optimization steps = 600",
		"| [   1/   2][    50/   600] |  120/800 batches | loss 0.5"},
		&sdk.Progress{Step: 50, Total: 600, Percentage: 100.0 / 12, Epoch: 1, EpochTotal: 2, Phase: "train", Source: "generic",
			Metrics: m{"loss": 0.5}}},
	// model.evaluate after fit: not the training bar (issue #15)
	{"an evaluate bar after the last epoch", []string{
		"Epoch 5/5",
		"300/300 [==============================] - 2s 6ms/step - loss: 0.2500 - acc: 0.9000",
		"120/120 [==============================] - 0s 2ms/step - loss: 0.3000 - acc: 0.8800"},
		&sdk.Progress{Step: 300, Total: 300, Percentage: 100, Epoch: 5, EpochTotal: 5, Rate: 6, RateUnit: "ms/step",
			Source: "keras", Metrics: m{"loss": 0.25, "acc": 0.9}}},
}

func init() {
	edgeCases = append(edgeCases, recordShapes...)
}

// TestKerasNewEpochBar: a bar of another size once a new epoch's header
// came is that epoch's (in one batch: across batches the header leaves no
// mark, and a last epoch of another size reads as evaluation).
func TestKerasNewEpochBar(t *testing.T) {
	got := run([]string{
		"Epoch 4/5",
		"300/300 [==============================] - 2s 6ms/step - loss: 0.2500",
		"Epoch 5/5",
		"150/310 [=============>................] - ETA: 1s - loss: 0.2400"}, 1000, true)
	want := &sdk.Progress{Step: 150, Total: 310, Percentage: 150.0 / 310 * 100, Epoch: 5, EpochTotal: 5, ETASeconds: 1,
		Rate: 6, RateUnit: "ms/step", Source: "keras", Metrics: m{"loss": 0.24}}
	if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
		t.Errorf("(-want +got):\n%s", d)
	}
}

// TestKerasNestedBarIsSide: a bar of another size inside an epoch (a
// callback's model.evaluate, "20/20") does not become the run's step or
// percentage: it sent the dashboard's percent chart to 100% (issue #24).
func TestKerasNestedBarIsSide(t *testing.T) {
	for _, lines := range [][]string{
		{"Epoch 3/10", "100/1562 [>.............................] - ETA: 1:00 - loss: 0.9000",
			"20/20 [==============================] - 0s 2ms/step - loss: 0.3000"},
		{"Epoch 3/10", "1562/1562 [==============================] - 40s 25ms/step - loss: 0.5000",
			"20/20 [==============================] - 0s 2ms/step"},
	} {
		got := run(lines, 1000, true)
		if got == nil || got.Total != 1562 || got.Percentage == 100 && got.Step != 1562 || got.Epoch != 3 {
			t.Errorf("%q: %+v, want the epoch's bar of 1562", lines, got)
		}
	}
}

// The shapes issue #24 added, each on lines written for it (not copied
// from the corpus), in one batch and one line per batch (the early stop's
// mark must survive a batch boundary).
func TestIssue24Shapes(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		check func(p *sdk.Progress) bool
	}{
		{"leading N/M:", []string{"3.  120/900: episode: 7, duration: 0.5s, episode steps: 40, loss: 0.25"},
			func(p *sdk.Progress) bool { return p.Step == 120 && p.Total == 900 && p.Metrics["loss"] == 0.25 }},
		{"leading N/M (epoch e)", []string{"12/80 (epoch 1), train_loss = 1.500, time/batch = 0.1"},
			func(p *sdk.Progress) bool { return p.Step == 12 && p.Total == 80 && p.Epoch == 1 }},
		{"[N | elapsed]", []string{"[40 | 12.50] loss=2.10 avg=2.30"},
			func(p *sdk.Progress) bool { return p.Step == 40 && p.Metrics["loss"] == 2.1 }},
		{"Epoch e, N/M;", []string{"Epoch  2,   300/1200; acc:  40.00; ppl:  9.50; xent: 2.25; 100 src tok/s"},
			func(p *sdk.Progress) bool {
				return p.Step == 300 && p.Total == 1200 && p.Epoch == 2 && p.Metrics["ppl"] == 9.5
			}},
		{"global step beside an epoch", []string{"[2025/01/01 10:00:00] x INFO: epoch: [2/9], global_step: 75, lr: 0.001000, loss: 0.500000"},
			func(p *sdk.Progress) bool { return p.Step == 75 && p.Epoch == 2 && p.EpochTotal == 9 }},
		{"global step beside a reward", []string{"global_step=640, episode_reward=3.5"},
			func(p *sdk.Progress) bool { return p.Step == 640 && p.Metrics["episode_reward"] == 3.5 }},
		{"one value a line", []string{"2025-01-01 10:00:00.000001: Epoch 4", "2025-01-01 10:00:01.000001: train_loss 0.25", "2025-01-01 10:00:02.000001: val_loss 0.3"},
			func(p *sdk.Progress) bool {
				return p.Epoch == 4 && p.Metrics["train_loss"] == 0.25 && p.Metrics["val_loss"] == 0.3
			}},
		{"spaced colon loss", []string{"epoch:  6", "train loss : -0.5"},
			func(p *sdk.Progress) bool { return p.Epoch == 6 && p.Metrics["train_loss"] == -0.5 }},
		{"a named counter in brackets is not a boosting round", []string{"INFO:root:Epoch[5] Batch [300]\tSpeed: 100.5 samples/sec\taccuracy=0.5"},
			func(p *sdk.Progress) bool { return p.Step == 300 && p.Epoch == 5 && p.Metrics["accuracy"] == 0.5 }},
		{"epoch in a bar's bracketed description", []string{"Train epoch [2/3]:  50%|█████     | 10/20 [00:10<00:10,  1.00it/s, pg=0.5]"},
			func(p *sdk.Progress) bool { return p.Step == 10 && p.Total == 20 && p.Epoch == 2 && p.EpochTotal == 3 }},
		{"an episode counter leading a record with a reward", []string{"Episode: 6, Actions: 1500, reward: -20, Avg. reward: -20.5", "Episode: 7, Actions: 1312, reward: -19,"},
			func(p *sdk.Progress) bool { return p.Step == 7 && p.Total == 0 && p.Metrics["reward"] == -19 }},
		{"a leading counter's record without a loss", []string{"1.  39160/50000: episode: 569, duration: 0.073s, episode steps: 13, episode reward: 13.000, loss: 78.8", "2.  39497/50000: episode: 570, duration: 1.759s, episode steps: 337, episode reward: 337.000, mean action: 0.499"},
			func(p *sdk.Progress) bool { return p.Step == 39497 && p.Total == 50000 }},
		{"a result dict's reward mean", []string{"training_iteration: 12", "  episode_reward_mean: -31.5"},
			func(p *sdk.Progress) bool { return p.Step == 12 && p.Metrics["episode_reward_mean"] == -31.5 }},
		{"a diff's + before each line; evaluate after fit of the same size", []string{"+Epoch 2/2", "+60/60 [==============================] - 0s - loss: 0.3000 - acc: 0.9000", "+20/60 [=========>....................] - ETA: 0s"},
			func(p *sdk.Progress) bool {
				return p.Step == 60 && p.Total == 60 && p.Epoch == 2 && p.Metrics["loss"] == 0.3
			}},
		{"metrics alone after fit's last epoch are evaluation's", []string{"Epoch 2/2", "60/60 [==============================] - 0s - loss: 0.3000 - acc: 0.9000", "Loss: 0.51, Accuracy: 74.87%"},
			func(p *sdk.Progress) bool { return p.Step == 60 && p.Metrics["loss"] == 0.3 && p.Metrics["Loss"] == 0 }},
		{"syslog's escapes of CR and backspace", []string{"Epoch 3/5", "#0151/9 [==>...........................] - ETA: 0s - loss: 1.5000#010#010#010#0159/9 [==============================] - 0s 8ms/step - loss: 1.2500"},
			func(p *sdk.Progress) bool {
				return p.Step == 9 && p.Total == 9 && p.Epoch == 3 && p.Metrics["loss"] == 1.25
			}},
		{"early stop, best round reprinted", []string{"[7]\ttrain-rmse:0.70\ttest-rmse:0.90", "[8]\ttrain-rmse:0.60\ttest-rmse:0.95", "Stopping. Best iteration:", "[7]\ttrain-rmse:0.70\ttest-rmse:0.90"},
			func(p *sdk.Progress) bool {
				return p.Step == 8 && p.Percentage == 100 && p.Metrics["test-rmse"] == 0.95
			}},
	}
	for _, c := range cases {
		for _, batch := range []int{1000, 1} {
			got := run(c.lines, batch, true)
			if got == nil || !c.check(got) {
				t.Errorf("%s (batch %d): %+v", c.name, batch, got)
			}
		}
	}
	// An episode counter without a reward on its line is not read.
	if got := run([]string{"Episode: 7, Actions: 1312, seed: 3"}, 1000, true); got != nil {
		t.Errorf("an episode counter with no reward: %+v", got)
	}
	// Alone, a global step is a setting (TestEdgeCases has the line).
	if got := run([]string{"restoring global_step=500 and steps_per_epoch=100"}, 1000, true); got != nil {
		t.Errorf("a global step alone: %+v", got)
	}
}
