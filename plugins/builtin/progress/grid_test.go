package progress

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/runbox/runbox/sdk"
)

// TestGridTables: column tables of bare numbers under a header, read
// through the host's prefilter (rows pass once the header did), in one
// batch and line by line; the final state's counters and metrics.
func TestGridTables(t *testing.T) {
	cases := []struct {
		name  string
		lines []string
		want  sdk.Progress // Message and Source are not compared
	}{{
		name: "right-aligned, a two-word column, times skipped",
		lines: []string{
			"   Iter     Train Loss    Remaining Time",
			"      1         2.5000            12.00s",
			"      2         2.2500            11.50s",
			"     10         1.0000             0.00s",
		},
		want: sdk.Progress{Step: 10, Phase: "train", Metrics: map[string]float64{"Train Loss": 1}},
	}, {
		name: "names over two lines, missing values and a flag column",
		lines: []string{
			"mean       last        sample    current",
			"loss       loss        counter   label",
			"0.900000   0.900000        4    1.0000",
			" unknown    unknown        8    0.0000 h",
			"0.400000   0.300000       16    1.0000",
		},
		want: sdk.Progress{Step: 16, Phase: "train", Metrics: map[string]float64{
			"mean loss": 0.4, "last loss": 0.3, "current label": 1,
		}},
	}, {
		name: "the end of a Vowpal Wabbit table",
		lines: []string{
			"average  since       example  example",
			"loss     last        counter   weight",
			"0.500000 0.500000          2      2.0",
			"0.250000 0.000000          4      4.0",
			"",
			"finished run",
			"number of examples = 4",
		},
		want: sdk.Progress{Step: 4, Percentage: 100, Phase: "train", Metrics: map[string]float64{
			"average loss": 0.25, "since last": 0, "example weight": 4,
		}},
	}, {
		name: "left-aligned with blank cells and escape text, epoch and iteration columns",
		lines: []string{
			"epoch       iteration   train/loss  val/loss    train/acc   elapsed_time",
			"ESC[J0           50          3.5                     0.12        10.5",
			"ESC[4AESC[J1           100         2.75        2.9         0.25        21.0",
		},
		want: sdk.Progress{Step: 100, Epoch: 1, Phase: "train", Metrics: map[string]float64{
			"train/loss": 2.75, "val/loss": 2.9, "train/acc": 0.25,
		}},
	}, {
		name: "a '#' step column and multi-word upper-case names",
		lines: []string{
			"E    #       LOSS ENCODER  LOSS TAGGER  TAG_ACC",
			"---  ------  ------------  -----------  -------",
			"  0       0          0.00        12.00     0.10",
			"  1     500          4.50         3.25     0.87",
		},
		want: sdk.Progress{Step: 500, Epoch: 1, Phase: "train", Metrics: map[string]float64{
			"LOSS ENCODER": 4.5, "LOSS TAGGER": 3.25, "TAG_ACC": 0.87,
		}},
	}, {
		name: "trap: an evaluation table's labelled rows are not the run's",
		lines: []string{
			"Epoch   train_loss   val_loss   accuracy",
			"   3        0.500      0.600       0.81",
			"   Split     Images    Loss      Acc",
			"     val        500    0.70     0.79",
		},
		want: sdk.Progress{Epoch: 3, Phase: "train", Metrics: map[string]float64{
			"train_loss": 0.5, "val_loss": 0.6, "accuracy": 0.81,
		}},
	}, {
		name: "a name/value table: its rows pass with the first that has a literal",
		lines: []string{
			"-------------------------------------",
			"| grad_norm             | 1.5   |", // above: sent with the first that passes
			"| total_timesteps       | 2048      |",
			"| kl_divergence         | 0.012     |",
			"| reward_mean           | nan       |",
			"| advantage_std         | 0.98      |",
			"-------------------------------------",
		},
		want: sdk.Progress{Step: 2048, Phase: "train", Metrics: map[string]float64{
			"grad_norm": 1.5, "kl_divergence": 0.012, "reward_mean": math.NaN(), "advantage_std": 0.98,
		}},
	}, {
		name: "trap: name/value rows with no row of a literal stay out",
		lines: []string{
			"| grad_norm             | 1.5   |",
			"| kl_divergence         | 0.012     |",
			"Saving the model",
			"| total_timesteps       | 2048      |",
		},
		want: sdk.Progress{Step: 2048, Phase: "train"},
	}, {
		name: "a status table drawn with pipes: text cells skipped, times too",
		lines: []string{
			"+------------------+----------+-------+--------------+---------+",
			"| Trial name       | status   |  iter |   time (s)   |   score |",
			"|------------------+----------+-------+--------------+---------|",
			"| PPO_cart_0001    | RUNNING  |    12 |       40.5   |   181.5 |",
			"+------------------+----------+-------+--------------+---------+",
		},
		want: sdk.Progress{Step: 12, Phase: "train", Metrics: map[string]float64{"score": 181.5}},
	}, {
		name: "a result box of names and values, and the trial's end",
		lines: []string{
			"Trial Trainer_0003 completed training after 8 iterations at 2024-01-01 10:00:00.",
			"╭───────────────╮",
			"│ Trial Trainer_0003 result      │",
			"│ time_this_iter_s        0.25   │",
			"│ training_iteration         8   │",
			"│ config/optim/momentum    0.9   │",
			"│ val_loss                 0.45  │",
		},
		want: sdk.Progress{Step: 8, Percentage: 100, Phase: "train", Metrics: map[string]float64{
			"config/optim/momentum": 0.9, "val_loss": 0.45,
		}},
	}, {
		name: "rows under a live bar do not move its counters back",
		lines: []string{
			"[ 450/1000 10:12 < 12:30, 0.73 it/s, Epoch 2.35/4]",
			"Epoch\tTraining Loss\tValidation Loss",
			"1\t0.900000\t0.950000",
			"2\t0.700000\t0.750000",
		},
		want: sdk.Progress{Step: 450, Total: 1000, Percentage: 45, Epoch: 3, EpochTotal: 4,
			ETASeconds: 750, Rate: 0.73, RateUnit: "it/s", Phase: "train",
			Metrics: map[string]float64{"Training Loss": 0.7, "Validation Loss": 0.75}},
	}}
	ignore := cmp.Options{cmpopts.IgnoreFields(sdk.Progress{}, "Message", "Source"), cmpopts.EquateNaNs()}
	for _, c := range cases {
		for _, batch := range []int{1, 1000} {
			got := run(c.lines, batch, true)
			if got == nil {
				t.Errorf("%s (batch %d): no progress", c.name, batch)
				continue
			}
			if d := cmp.Diff(c.want, *got, ignore); d != "" {
				t.Errorf("%s (batch %d) (-want +got):\n%s", c.name, batch, d)
			}
		}
	}
}

// TestGridNotAlone: rows with no header before them, or after prose, are
// nothing.
func TestGridNotAlone(t *testing.T) {
	for _, lines := range [][]string{
		{"      1         2.5000            12.00", "      2         2.2500            11.50"},
		{"The loss is computed as follows", "      1         2.5000            12.00"},
	} {
		if got := run(lines, 1000, true); got != nil && (got.Step != 0 || len(got.Metrics) != 0) {
			t.Errorf("%q: got %+v", lines, got)
		}
	}
}
