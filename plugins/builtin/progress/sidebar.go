package progress

import "github.com/runbox/runbox/sdk"

// The training bar (issue #15): of the bars a job draws, only its main
// work's sets Step, Total, Percentage and Phase. Downloads and uploads
// (byte rates, file names), loading checkpoint shards, dataset
// preparation and the evaluation loops inside training (validation,
// test, predict, Lightning's sanity check, MLX-LM's "Calculating loss")
// are side bars: the parser that reads one sets state.side, and Parse
// drops its update.

// sideWords mark a side bar's description (lowercase, matched anywhere).
var sideWords = newWordSet(
	"download", "fetching", "loading", "upload", "shard", "safetensors", ".bin", ".pt", ".pth", ".gguf", ".json", ".ckpt",
	".zip", ".tar", ".model", "tokeniz", "resolving", "extract", "filter", "building", "preprocess",
	"calculating loss", "convert", "saving", "writing", "unpack", "copying", "verifying", "checksum",
)

// sideBar reports a bar that is not the job's main work: its phase is an
// evaluation loop, its rate counts bytes, or its description names a
// transfer or preparation step.
func sideBar(desc, phase, unit string) bool {
	switch phase {
	case "validation", "evaluation", "test", "predict", "sanity_check":
		return true
	}
	if n := len(unit); n >= 3 && unit[n-3:] == "B/s" {
		return true // B/s, kB/s, MB/s, GB/s: a transfer
	}
	if desc == "" {
		return false
	}
	return sideWords.in(desc, letterMask(desc)) || indexWord(desc, "map") >= 0
}

// dataPassRate is a rate no training step reaches and a pass over records
// (reading a dataset, counting a vocabulary) easily does.
const dataPassRate = 10000

// dataPass reports a bar with no description at a record reader's rate,
// with no total ("21it [00:00, 11770.73it/s]" while a dataset is read) or
// done within its first second ("21/21 [00:00<00:00, 198379.24it/s]"): it
// counts records, not the job's steps. A long training loop that fast
// takes more than a second, and keeps its bar.
func dataPass(desc string, n, total int64, u *sdk.Progress, st *state) bool {
	if desc != "" || u.RateUnit != "it/s" || u.Rate < dataPassRate {
		return false
	}
	return total == 0 || n == total && st.instant
}
