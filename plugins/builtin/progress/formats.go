package progress

import (
	"slices"

	"github.com/runbox/runbox/plugins/builtin/decl"
	"github.com/runbox/runbox/sdk"
)

// A format is one progress format this plugin reads, as data (issue #24):
// its name, the cheap literals the host looks for before it sends a line
// (every line the format accepts contains one of them, or one of an
// earlier entry's), the confirm patterns that narrow a literal to the
// occurrences the format reads, and what its captured fields mean. The
// host's Prefilter and PrefilterConfirm are derived from this table, never
// kept beside it; the order of the table is the readers' priority (most
// specific first), and parseFormats runs the readers in that order.
//
// A format is read either by data or by code. A declarative format
// (decl) is templates with named holes, read by one generic reader
// (package decl, the one a bundle's rules file uses too); a format whose
// grammar templates cannot say (tqdm's bar, Keras's counts, a boosting
// round: docs/DETECTION.md lists them and why) has a structural matcher,
// named by the entry and bound in readers (reader.go). A format with
// neither is read by the entry that names it in fields.
type format struct {
	name     string
	literals []string
	confirm  []sdk.PrefilterConfirm
	// decl: the format's line shapes as data, tried in order.
	decl []decl.Entry
	// fields says what the reader captures: step, total, epoch, percent,
	// metric name/value, phase, end of run.
	fields string
}

// formats, in priority order. Adding a framework whose lines no entry
// reads: docs/DETECTION.md "Adding a framework" (a rules file first; an
// entry here with a reader when a structural matcher is needed).
var formats = []format{
	{name: "runbox", literals: []string{"##PROGRESS##"}, // contract
		fields: "a JSON record after ##PROGRESS##: step, total, epoch, epoch_total, percentage, phase, metrics, message (sdk.Progress)"},
	{name: "tqdm",
		literals: []string{
			"%|",         // tqdm / Lightning bar with a total
			"it/s",       // tqdm rates, rich bars
			"s/it",       // slow tqdm rates
			"/s]", "/s,", // any tqdm rate unit (B/s, tok/s, ...)
		},
		fields: "n/total → step/total, the percent before %| → percentage, rate and unit, ETA, key=value postfix → metrics, the description → phase (Epoch 3 → epoch)"},
	{name: "keras",
		literals: []string{
			"ETA",     // Keras 2 bars
			"/sample", // TF 1.x Keras end-of-epoch
			"━",       // Keras 3 / rich bars
		},
		fields: "\"Epoch e/E\" header → epoch/epoch_total; \"n/N [===>...]\" bar → step/total; \"- loss: v - acc: v\" → metrics; \"val_\" metrics after the last step end the epoch"},
	{name: "hf-dict",
		fields: "a Hugging Face Trainer log dict {'loss': v, 'epoch': e} → metrics, epoch_exact; its literals are the keyword entry's (poch, loss)"},
	{name: "mlx-start",
		decl: []decl.Entry{
			{Name: "mlx-start", Source: "mlx", Phase: "train", Match: []string{"Starting training", "iters: {total}"}},
		},
		fields: "\"Starting training..., iters: N\" → total (data); its literals are the keyword entry's (iter)"},
	{name: "mlx",
		confirm: []sdk.PrefilterConfirm{
			{Literal: "iter", After: `s:[ \t]*\d`}, // MLX "Starting training..., iters: 600"
			{Literal: "Iter", After: ` \d`},        // MLX "Iter 10: Train loss 2.345"
		},
		fields: "\"Iter n: Train loss v, ...\" → step, metrics; \"Val loss\" lines → evaluation metrics"},
	{name: "mm",
		confirm: []sdk.PrefilterConfirm{
			{Literal: "Iter", After: `(?:\([^)]*\))?:?[ \t]*\[`}, // mmengine "Iter(train) [  50/1000]"
		},
		fields: "MMCV/mmengine/detectron2 \"Epoch [e][n/N]\", \"Iter(train) [n/N]\", \"iter: n\" → epoch, step/total; \"name: v\" pairs → metrics"},
	{name: "boost",
		literals: []string{
			"]\t", // XGBoost / LightGBM "[10]\t..."
			// boosting rounds with their data set's metric: "[2]  train-rmse:0.1",
			// "training-error:"; never a common pair such as "er" or "ma"
			"-rmse:", "-auc:", "g-error:", "n-error:", "l-error:", "t-error:",
			// LightGBM's "<data>'s <metric>:" ("[30]:  train's l2:0.085")
			"'s l2:", "'s l1:", "'s rmse:",
			":\tlearn",      // CatBoost rounds "45:\tlearn: 0.95"
			"learn ",        // a round's "learn" without a tab or colon: "13:     learn 0.29"
			"[Info] Finish", // LightGBM "Finish train"
			// boosting rounds counted in trees: "built tree 3 of 100, train
			// score = 1.2" (confirmed below: a count of a total after it)
			"tree ",
		},
		confirm: []sdk.PrefilterConfirm{
			{Literal: "learn ", Before: `(?:^|[^A-Za-z0-9_])\d+:[ \t]+`},
			{Literal: "tree ", After: `\d+ of \d+`},
			// XGBoost's early stop, "Stopping. Best iteration:" (the round
			// may follow on the next line)
			{Literal: "iter", Before: `Best `, After: `ation:`},
		},
		fields: "a round \"[n]\" or \"n:\" → step (a total when announced); \"data-metric:v\", \"data's metric: v\", \"learn: v\" → metrics named data's metric; \"Finish\"/early stop → end of run"},
	{name: "fastai",
		literals: []string{
			"% [", // fastprogress console bars
			// fastai table rows: the epoch column is padded to the width of the
			// header ("epoch" + 3) plus two spaces.
			"0       ", "1       ", "2       ", "3       ", "4       ",
			"5       ", "6       ", "7       ", "8       ", "9       ",
		},
		fields: "the header \"epoch train_loss valid_loss ... time\" names the columns; a row → epoch and metrics by column; \"p% [n/N ...]\" → step/total, percentage"},
	{name: "hf-notebook",
		decl: []decl.Entry{
			{Name: "hf-notebook", Source: "huggingface", Phase: "train", RateUnit: "it/s",
				Match:    []string{"^[ {step} / {total}", "Epoch {epoch:elapsed}/{epoch_total}", "]$"},
				Optional: []string{"< {eta:clock}", "{rate} it/s"}},
		},
		fields: "a Hugging Face notebook bar \"[n/N mm:ss < mm:ss, r it/s, Epoch e/E]\" → step/total, epoch/epoch_total, rate; its literals are the keyword entry's"},
	{name: "hf-banner",
		confirm: []sdk.PrefilterConfirm{
			{Literal: "tep", After: `s = `}, // HF banner "Total optimization steps = 1,851"
		},
		decl: []decl.Entry{
			{Name: "hf-epochs", Source: "huggingface", Match: []string{"Num Epochs = {epoch_total:count}$"}},
			{Name: "hf-steps", Source: "huggingface", Phase: "train", Match: []string{"Total optimization steps = {total:count}$"}},
		},
		fields: "the Trainer's banner \"Num Epochs = E\", \"Total optimization steps = N\" → epoch_total, total"},
	{name: "keyword",
		literals: []string{
			"poch", "POCH", // Epoch/epoch: Keras, Lightning, HF dicts, MMCV, generic, fastai header
			"tep", "TEP", // step/Step/STEP, Keras "ms/step"
			"Iter", "iter", "ITER", // MLX-LM, detectron2, mmengine, generic
			"loss", "Loss", "LOSS", // metric-only lines
			"atch",    // Batch/batch
			"rogress", // "Progress: 45%"
		},
		confirm: slices.Concat(
			confirmKeyword("tep", "[Ss]"), confirmKeyword("TEP", "S"),
			[]sdk.PrefilterConfirm{
				{Literal: "tep", Before: `/s`}, // Keras "50ms/step"
				// "global_step=3553, episode_reward=28.0" (CleanRL and others)
				{Literal: "tep", Before: `global_s`, After: `[ \t:=]*\d`},
			},
			confirmKeyword("atch", "[Bb]"),
			confirmKeyword("Iter", ""), confirmKeyword("iter", ""), confirmKeyword("ITER", ""),
			[]sdk.PrefilterConfirm{
				// countedWords: "000 epoch, 06000 iter, loss 37.2", the count
				// before the word (FuzzParse found "0 iter," read, not sent)
				{Literal: "iter", Before: `\d `, After: `(?:ation)?(?:,|$)`},
				{Literal: "rogress", After: `[ \t:=\[(#]*[+-]?\.?\d`}, // "Progress: 45%"
				{Literal: "rogress", Before: escBefore}, {Literal: "rogress", After: escAfter},
			},
		),
		fields: "\"Epoch e/E\", \"step n/N\", \"Iteration n of N\", \"batch [n/N]\", \"Progress: p%\" → epoch/epoch_total, step/total, percentage; \"name: v\", \"name=v\" → metrics; an evaluation report is declined; what it leaves unknown the record reader fills"},
	{name: "record",
		literals: []string{
			// the generic record reader (record.go). Each literal starts where
			// its first bytes are rare in logs: the host marks the pairs of its
			// first bytes (a two-byte literal: its second byte before any byte),
			// and every marked pair in a line costs a look.
			"[Parallel(",         // joblib
			"PROGRESS",           // gensim
			"] Trial ",           // Optuna "[I 2020-12-16 12:47:14,656] Trial 52 pruned."
			"`Trainer.fit`",      // Lightning "`Trainer.fit` stopped"
			"w_mean ", "n_mean ", // stable-baselines "| ep_rew_mean | -213 |" (confirmed below)
			"pisode",   // "Episode: 74, Actions: 2162, reward: -19" (confirmed below)
			"d_mean: ", // RLlib's result "episode_reward_mean: -544.68" ("d_" is rare in logs)
			// value-first records: darknet "4: 2.85, 2.89 avg, 0.0001 rate, ..."
			"avg, ",
			// Ray's trial end: "Trial X completed training after 20 iterations"
			"training after ",
			"finished run", // Vowpal Wabbit's end, on a line of its own
			" TERMINATED)", // Ray Tune: "Number of trials: 4/4 (4 TERMINATED)"
		},
		confirm: []sdk.PrefilterConfirm{
			// an episode counter that leads a record with a reward on it
			{Literal: "pisode", Before: `^[ \t]*[Ee]`, After: `[ \t:#]*\d+[ \t,;|].*(?i:reward)`},
			// stable-baselines "| total_timesteps | 100096 |"
			{Literal: "tep", Before: `times`, After: `s *\| *[0-9]`},
			// a "| name_mean | value |" row; "nan" before the first episode ends
			{Literal: "w_mean ", After: ` *\| *(?:-?[0-9]|[-+]?(?i:nan|inf))`},
			{Literal: "n_mean ", After: ` *\| *(?:-?[0-9]|[-+]?(?i:nan|inf))`},
			// Ray's "training_iteration: 20" (a row of its result box too)
			{Literal: "iter", Before: `training_`, After: `ation[ \t:=|]*\d`},
			// a record's percentage key: "progress": 42.1, 'progress'=40
			// (structure.go)
			{Literal: "rogress", Before: `(?:^|[^A-Za-z0-9_])["']?[Pp]`, After: `["']?[ \t]*[:=][ \t]*["']?\d`},
		},
		fields: "structure with no named rule (record.go): a counter with a total next to a progress word, key/value and JSON/dict records with metric-like keys, table rows, end-of-run lines (joblib, Optuna, gensim, Ray, stable-baselines, RLlib, darknet), a percentage key (\"progress\": 42.1, structure.go); reached through the keyword entry and after line-logger formats, whose answers it refines"},
}

// derivedPrefilter is every entry's literals, in table order, once each.
func derivedPrefilter() []string {
	var out []string
	for _, f := range formats {
		for _, l := range f.literals {
			if !slices.Contains(out, l) {
				out = append(out, l)
			}
		}
	}
	return out
}

// derivedConfirm is every entry's confirm patterns, in table order.
func derivedConfirm() []sdk.PrefilterConfirm {
	var out []sdk.PrefilterConfirm
	for _, f := range formats {
		out = append(out, f.confirm...)
	}
	return out
}
