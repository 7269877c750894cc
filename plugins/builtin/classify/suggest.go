package classify

import (
	"strconv"
	"strings"
)

// Suggestions grounded in the run (issue #15, item 5): the flag in the
// run's own command that sets the batch size, and a smaller value to try;
// a path the command or output names that is close to the missing one.

// batchFlags are the command-line names of a batch size, lowercased.
var batchFlags = []string{
	"--batch_size", "--batch-size", "--batchsize", "--bs", "-b", "--batch",
	"--per_device_train_batch_size", "--per-device-train-batch-size", "--train_batch_size", "--train-batch-size",
	"--micro_batch_size", "--micro-batch-size", "--micro_train_batch_size", "--train_micro_batch_size_per_gpu",
	"--global_batch_size", "--global-batch-size", "--imgs_per_gpu", "--samples_per_gpu",
	"batch_size", "train.batch_size", "data.batch_size", "training.batch_size", "dataloader.batch_size",
}

// commandWords splits the run's command into words, including the words
// of a shell string ("bash -c 'python train.py --bs 64'").
func commandWords(cmd []string) []string {
	var out []string
	for _, a := range cmd {
		if strings.ContainsAny(a, " \t") {
			for _, f := range strings.Fields(a) {
				out = append(out, strings.Trim(f, "'\""))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// batchSize finds the batch-size setting in the command: the flag as
// written and its value ("--batch-size 64", "--bs=64", "batch_size=64").
func batchSize(cmd []string) (flag string, n int, ok bool) {
	w := commandWords(cmd)
	for i, a := range w {
		name, val, eq := strings.Cut(a, "=")
		if eq && strings.HasPrefix(name, "+") {
			name = name[1:] // Hydra "+batch_size=64"
		}
		if !isBatchFlag(strings.ToLower(name)) {
			continue
		}
		if !eq {
			if !strings.HasPrefix(name, "-") || i+1 >= len(w) {
				continue
			}
			val = w[i+1]
		}
		if v, err := strconv.Atoi(val); err == nil && v > 0 {
			return name, v, true
		}
	}
	return "", 0, false
}

func isBatchFlag(name string) bool {
	for _, f := range batchFlags {
		if name == f {
			return true
		}
	}
	return false
}

// batchSuggestion says which flag of the run's command to lower, and to
// what: half, keeping the effective batch with gradient accumulation.
func (sc *scanner) batchSuggestion() string {
	flag, n, ok := batchSize(sc.in.Command)
	if !ok {
		return ""
	}
	if n == 1 {
		return "The run already uses `" + flag + " 1`: a smaller batch cannot help; shorten the sequence length or image size, use gradient checkpointing or lower precision."
	}
	half := strconv.Itoa(n / 2)
	return "Halve the batch size in the run's command: `" + flag + " " + half + "` instead of " + strconv.Itoa(n) +
		" (and, to keep the effective batch, accumulate gradients over 2 steps)."
}

// nearPath returns a path named in the run's command or output that is
// close to the missing path (a typo, a different extension or
// directory), or "".
func (sc *scanner) nearPath(missing string) string {
	if missing == "" {
		return ""
	}
	base := missing[strings.LastIndexByte(missing, '/')+1:]
	best, bestD := "", len(missing)/3+1
	try := func(p string) {
		p = strings.Trim(p, "'\"`,;()[]")
		if p == missing || len(p) < 3 || !strings.ContainsAny(p, "/.") {
			return
		}
		if _, v, ok := strings.Cut(p, "="); ok {
			p = v
		}
		d := editDistance(p, missing)
		if pb := p[strings.LastIndexByte(p, '/')+1:]; pb == base && d > 0 {
			d = min(d, bestD-1) // same file name in another directory
		}
		if d > 0 && d < bestD {
			best, bestD = p, d
		}
	}
	for _, a := range commandWords(sc.in.Command) {
		try(a)
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (short strings).
func editDistance(a, b string) int {
	if len(a) > 256 || len(b) > 256 {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := prev[j-1]
			if a[i-1] != b[j-1] {
				c++
			}
			cur[j] = min(c, prev[j]+1, cur[j-1]+1)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
