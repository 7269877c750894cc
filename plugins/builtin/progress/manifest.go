package progress

import (
	"slices"

	"github.com/runbox/runbox/sdk"
)

// Version of the plugin; bump it when what Parse reports changes.
const Version = "0.1.3"

// Prefilter lists the literals the host looks for before sending a line.
// Every line any parser here accepts contains at least one of them
// (TestPrefilterCovers checks the fixtures, FuzzParse checks arbitrary
// input); ordinary log lines mostly contain none.
var Prefilter = []string{
	"##PROGRESS##", // contract
	"%|",           // tqdm / Lightning bar with a total
	"it/s",         // tqdm rates, rich bars
	"s/it",         // slow tqdm rates
	"/s]", "/s,",   // any tqdm rate unit (B/s, tok/s, ...)
	"poch", "POCH", // Epoch/epoch: Keras, Lightning, HF dicts, MMCV, generic, fastai header
	"tep", "TEP", // step/Step/STEP, Keras "ms/step"
	"ETA",                  // Keras 2 bars
	"/sample",              // TF 1.x Keras end-of-epoch
	"━",                    // Keras 3 / rich bars
	"Iter", "iter", "ITER", // MLX-LM, detectron2, mmengine, generic
	"loss", "Loss", "LOSS", // metric-only lines
	"atch",    // Batch/batch
	"]\t",     // XGBoost / LightGBM "[10]\t..."
	"rogress", // "Progress: 45%"
	"% [",     // fastprogress console bars
	// the generic record reader (record.go). Each literal starts where
	// its first bytes are rare in logs: the host marks the pairs of its
	// first bytes (a two-byte literal: its second byte before any byte),
	// and every marked pair in a line costs a look.
	":\tlearn",           // CatBoost rounds "45:\tlearn: 0.95"
	"[Parallel(",         // joblib
	"PROGRESS",           // gensim
	"] Trial ",           // Optuna "[I 2020-12-16 12:47:14,656] Trial 52 pruned."
	"[Info] Finish",      // LightGBM "Finish train"
	"`Trainer.fit`",      // Lightning "`Trainer.fit` stopped"
	"w_mean ", "n_mean ", // stable-baselines "| ep_rew_mean | -213 |" (confirmed below)
	"pisode",   // "Episode: 74, Actions: 2162, reward: -19" (confirmed below)
	"d_mean: ", // RLlib's result "episode_reward_mean: -544.68" ("d_" is rare in logs)
	// boosting rounds with their data set's metric: "[2]  train-rmse:0.1",
	// "training-error:"; never a common pair such as "er" or "ma"
	"-rmse:", "-auc:", "g-error:", "n-error:", "l-error:", "t-error:",
	// LightGBM's "<data>'s <metric>:" ("[30]:  train's l2:0.085")
	"'s l2:", "'s l1:", "'s rmse:",
	// value-first records: darknet "4: 2.85, 2.89 avg, 0.0001 rate, ..."
	"avg, ",
	// a round's "learn" without a tab or colon: "13:     learn 0.29"
	"learn ",
	// Ray's trial end: "Trial X completed training after 20 iterations"
	"training after ",
	"finished run", // Vowpal Wabbit's end, on a line of its own
	" TERMINATED)", // Ray Tune: "Number of trials: 4/4 (4 TERMINATED)"
	// boosting rounds counted in trees: "built tree 3 of 100, train
	// score = 1.2" (confirmed below: a count of a total after it)
	"tree ",
	// fastai table rows: the epoch column is padded to the width of the
	// header ("epoch" + 3) plus two spaces.
	"0       ", "1       ", "2       ", "3       ", "4       ",
	"5       ", "6       ", "7       ", "8       ", "9       ",
}

// Patterns of the confirm entries below (RE2, matched around a literal).
const (
	// What kwNum reads after a keyword: "Step 45", "Step: [45/100]",
	// "Iteration 45", and plurals only before a fraction ("Steps 45/100",
	// "batches 3 of 10"); numbers after a plural are settings ("every 500
	// steps 3", "epochs: 10").
	kwSingular = `(?i:ation)?[ \t:=\[(#]*\d`
	kwPlural   = `(?i:s|es|ations)[ \t:=\[(#]*\d+(?:/| of )\d`
	// "45/100 steps": kwNum's count before the keyword.
	// A counter that leads the record (leadingCount: "40606/50000: ...",
	// after a list marker "2.  "): the keyword may be anywhere after it.
	kwLeadingCount = `^[_*]*(?:\d{1,3}\. +)?\d+/\d+(?:: | \([Ee]poch).*`
	kwCountBefore  = `\d/\d+ `
	// clean strips ANSI escapes before parsing, so a line with one may
	// have the number anywhere: any ESC before or after lets it through.
	escBefore = `\x1b.*`
	escAfter  = `.*\x1b`
)

// confirmKeyword confirms a literal that ends a keyword kwNum reads;
// first matches the keyword's bytes before the literal. kwNum wants the
// keyword at the start of a word.
func confirmKeyword(lit, first string) []sdk.PrefilterConfirm {
	word := `(?:^|[^A-Za-z0-9_])` + first
	return []sdk.PrefilterConfirm{
		{Literal: lit, Before: word, After: kwSingular},
		{Literal: lit, Before: word, After: kwPlural},
		{Literal: lit, Before: kwCountBefore + first},
		{Literal: lit, Before: kwLeadingCount},
		{Literal: lit, Before: escBefore},
		{Literal: lit, After: escAfter},
	}
}

// PrefilterConfirm narrows the literals that ordinary text is full of
// ("steps", "batch_size", "dispatch", "iterator", "SummaryWriter", "in
// progress") to the occurrences a parser here can read: every line any
// parser accepts passes them (TestPrefilterCovers checks the fixtures,
// FuzzPrefilterConfirm arbitrary input), and a host that predates them
// just sends more lines.
var PrefilterConfirm = slices.Concat(
	confirmKeyword("tep", "[Ss]"), confirmKeyword("TEP", "S"),
	[]sdk.PrefilterConfirm{
		{Literal: "tep", After: `s = `}, // HF banner "Total optimization steps = 1,851"
		{Literal: "tep", Before: `/s`},  // Keras "50ms/step"
		// "global_step=3553, episode_reward=28.0" (CleanRL and others)
		{Literal: "tep", Before: `global_s`, After: `[ \t:=]*\d`},
	},
	[]sdk.PrefilterConfirm{
		// an episode counter that leads a record with a reward on it
		{Literal: "pisode", Before: `^[ \t]*[Ee]`, After: `[ \t:#]*\d+[ \t,;|].*(?i:reward)`},
	},
	[]sdk.PrefilterConfirm{
		// stable-baselines "| total_timesteps | 100096 |"
		{Literal: "tep", Before: `times`, After: `s *\| *[0-9]`},
		// a "| name_mean | value |" row; "nan" before the first episode ends
		{Literal: "w_mean ", After: ` *\| *(?:-?[0-9]|[-+]?(?i:nan|inf))`},
		{Literal: "n_mean ", After: ` *\| *(?:-?[0-9]|[-+]?(?i:nan|inf))`},
	},
	confirmKeyword("atch", "[Bb]"),
	confirmKeyword("Iter", ""), confirmKeyword("iter", ""), confirmKeyword("ITER", ""),
	[]sdk.PrefilterConfirm{
		{Literal: "iter", After: `s:[ \t]*\d`},                // MLX "Starting training..., iters: 600"
		{Literal: "Iter", After: ` \d`},                       // MLX "Iter 10: Train loss 2.345"
		{Literal: "Iter", After: `(?:\([^)]*\))?:?[ \t]*\[`},  // mmengine "Iter(train) [  50/1000]"
		{Literal: "rogress", After: `[ \t:=\[(#]*[+-]?\.?\d`}, // "Progress: 45%"
		{Literal: "rogress", Before: escBefore}, {Literal: "rogress", After: escAfter},
		{Literal: "learn ", Before: `(?:^|[^A-Za-z0-9_])\d+:[ \t]+`},
		{Literal: "tree ", After: `\d+ of \d+`},
		// XGBoost's early stop, "Stopping. Best iteration:" (the round
		// may follow on the next line)
		{Literal: "iter", Before: `Best `, After: `ation:`},
		// Ray's "training_iteration: 20" (a row of its result box too)
		{Literal: "iter", Before: `training_`, After: `ation[ \t:=|]*\d`},
	},
)

// Manifest describes the plugin to the host.
var Manifest = sdk.Manifest{
	Name:        "runbox-progress",
	Version:     Version,
	ABI:         sdk.ABIVersion,
	Kinds:       []sdk.Kind{sdk.KindProgress},
	Description: "Default progress parser: ##PROGRESS##, tqdm, Lightning, Keras, Hugging Face, MLX-LM, XGBoost, LightGBM, fastai, detectron2, MMCV and generic step/epoch lines.",
	Frameworks: []string{
		"runbox", "tqdm", "pytorch-lightning", "keras", "tensorflow", "transformers",
		"mlx-lm", "xgboost", "lightgbm", "fastai", "detectron2", "mmcv", "mmengine", "pytorch",
	},
	Prefilter:        Prefilter,
	PrefilterConfirm: PrefilterConfirm,
}

// byFirst indexes Prefilter by first byte, and pairs marks the first two
// bytes of every literal, so that hasPrefilter looks at most positions
// with one table lookup.
var byFirst, pairs = func() (t [256][]string, bits [1 << 16 / 64]uint64) {
	for _, p := range Prefilter {
		t[p[0]] = append(t[p[0]], p)
		k := uint16(p[0])<<8 | uint16(p[1])
		bits[k>>6] |= 1 << (k & 63)
	}
	return t, bits
}()

// hasPrefilter reports whether s contains one of the Prefilter literals,
// in one pass over s. Parse applies it to every raw line first: a line the
// host would not send can never produce an update, and the common
// ordinary line is rejected without running any parser.
func hasPrefilter(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, p := range byFirst[s[i]] {
			if len(s)-i >= len(p) && s[i+1] == p[1] && s[i:i+len(p)] == p {
				return true
			}
		}
	}
	return false
}
