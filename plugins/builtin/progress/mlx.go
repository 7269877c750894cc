package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// MLX-LM (mlx_lm.lora / mlx_lm.fuse) training:
//
//	Starting training..., iters: 600
//	Iter 10: Train loss 2.345, Learning Rate 1.000e-05, It/sec 1.234, Tokens/sec 567.8, Trained Tokens 1234, Peak mem 5.678 GB
//	Iter 20: Val loss 2.100, Val took 3.400s
func parseMLX(s string, st *state) (u sdk.Progress, ok bool) {
	if k := strings.Index(s, "Starting training"); k >= 0 {
		if i := strings.Index(s[k:], "iters:"); i >= 0 {
			if n, _, ok := parseUint(s, skipSpaces(s, k+i+6)); ok && n > 0 {
				return sdk.Progress{Source: "mlx", Total: n, Phase: "train"}, true
			}
		}
		return u, false
	}
	k := strings.Index(s, "Iter ")
	if k < 0 || (k > 0 && isLetter(s[k-1])) {
		return u, false
	}
	n, j, ok := parseUint(s, k+5)
	if !ok || j >= len(s) || s[j] != ':' {
		return u, false
	}
	rest := s[j+1:]
	u = sdk.Progress{Source: "mlx", Step: n}
	// The total comes from "Starting training..., iters: N" or from the
	// tqdm bar some MLX trainers draw around these lines.
	if (st.source == "mlx" || st.source == "tqdm") && st.total >= n {
		u.Percentage = pct(n, st.total)
	}
	if !isASCII(rest) {
		for _, seg := range strings.Split(rest, ",") {
			mlxSeg(&u, strings.Fields(seg))
		}
		return u, true
	}
	// strings.Split and strings.Fields by hand, for ASCII text.
	var buf [12]string
	f := buf[:0]
	b, over := -1, false
	for i := 0; i <= len(rest); i++ {
		c := byte(',')
		if i < len(rest) {
			c = rest[i]
		}
		if c != ',' && !asciiSpace(c) {
			if b < 0 {
				b = i
			}
			continue
		}
		if b >= 0 {
			if len(f) < len(buf) {
				f = append(f, rest[b:i])
			} else {
				over = true
			}
			b = -1
		}
		if c == ',' {
			if over {
				j := i - 1
				for j >= 0 && rest[j] != ',' {
					j--
				}
				f = strings.Fields(rest[j+1 : i])
			}
			mlxSegASCII(&u, f)
			f, over = buf[:0], false
		}
	}
	return u, true
}

// mlxSeg reads the fields of one comma-separated segment: "Train loss
// 2.345", "It/sec 1.234", "Peak mem 5.678 GB".
func mlxSeg(u *sdk.Progress, f []string) {
	for i := 1; i < len(f); i++ {
		v, e, ok := parseNum(f[i], 0)
		if !ok {
			continue
		}
		unit := f[i][e:]
		if unit == "" && i+1 < len(f) {
			unit = f[i+1]
		}
		name := strings.ToLower(strings.Join(f[:i], "_"))
		switch name {
		case "it/sec", "it/s":
			u.Rate, u.RateUnit = v, "it/s"
			continue
		case "train_loss":
			u.Phase = "train"
		case "val_loss":
			u.Phase = "validation"
		}
		if index(name, "/sec") >= 0 {
			name = strings.ReplaceAll(name, "/sec", "_per_sec")
		}
		if unit != "" && len(unit) <= 3 && isLetter(unit[0]) {
			name += "_" + strings.ToLower(unit)
		}
		addMetric(&u.Metrics, name, v)
		break
	}
}

// mlxSegASCII is mlxSeg for ASCII fields, building the name in place.
func mlxSegASCII(u *sdk.Progress, f []string) {
	for i := 1; i < len(f); i++ {
		v, e, ok := parseNum(f[i], 0)
		if !ok {
			continue
		}
		unit := f[i][e:]
		if unit == "" && i+1 < len(f) {
			unit = f[i+1]
		}
		var buf [64]byte
		b := buf[:0]
		for k, w := range f[:i] {
			if k > 0 {
				b = append(b, '_')
			}
			b = appendLower(b, w)
		}
		switch string(b) {
		case "it/sec", "it/s":
			u.Rate, u.RateUnit = v, "it/s"
			continue
		case "train_loss":
			u.Phase = "train"
		case "val_loss":
			u.Phase = "validation"
		}
		suffix := unit != "" && len(unit) <= 3 && isLetter(unit[0])
		if index(string(b), "/sec") >= 0 {
			name := strings.ReplaceAll(string(b), "/sec", "_per_sec")
			if suffix {
				name += "_" + strings.ToLower(unit)
			}
			addMetric(&u.Metrics, name, v)
			break
		}
		if suffix {
			b = appendLower(append(b, '_'), unit)
		}
		addMetric(&u.Metrics, string(b), v)
		break
	}
}

func appendLower(b []byte, w string) []byte {
	for i := 0; i < len(w); i++ {
		c := w[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		b = append(b, c)
	}
	return b
}
