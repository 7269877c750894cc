package progress

import (
	"math/bits"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// MLX-LM (mlx_lm.lora / mlx_lm.fuse) training:
//
//	Starting training..., iters: 600
//	Iter 10: Train loss 2.345, Learning Rate 1.000e-05, It/sec 1.234, Tokens/sec 567.8, Trained Tokens 1234, Peak mem 5.678 GB
//	Iter 20: Val loss 2.100, Val took 3.400s
//
// The first line is data (the mlx-start entry, formats.go); the Iter
// lines are code: their comma-separated segments name a metric by
// several words and a unit ("Peak mem 5.678 GB" → peak_mem_gb, "It/sec"
// → the rate), which a template with fixed holes cannot say.
func parseMLX(s string, st *state) (u sdk.Progress, ok bool) {
	k := index(s, "Iter ")
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
			mlxSeg(&u, strings.Fields(seg), st)
		}
		return u, true
	}
	// strings.Split and strings.Fields by hand, for ASCII text, from one
	// separator (a comma or a space) to the next.
	var buf [12]string
	f := buf[:0]
	over := false
	for i := 0; i <= len(rest); {
		e := mlxSep(rest, i)
		if e > i {
			if len(f) < len(buf) {
				f = append(f, rest[i:e])
			} else {
				over = true
			}
		}
		if e == len(rest) || rest[e] == ',' {
			if over {
				j := e - 1
				for j >= 0 && rest[j] != ',' {
					j--
				}
				f = strings.Fields(rest[j+1 : e])
			}
			mlxSegASCII(&u, f, st)
			f, over = buf[:0], false
		}
		i = e + 1
	}
	return u, true
}

// mlxSep returns the index of the first comma or ASCII space in s from i
// on, or len(s): eight bytes per step.
func mlxSep(s string, i int) int {
	const lsb, msb = 0x0101010101010101, 0x8080808080808080
	for ; i+8 <= len(s); i += 8 {
		x := load8(s[i:])
		y := x ^ lsb*','
		// Bytes below 0x21 (spaces among them) and commas; exact up to
		// the first one, so each is checked.
		for t := ((x-lsb*0x21)&^x | (y-lsb)&^y) & msb; t != 0; t &= t - 1 {
			if k := i + bits.TrailingZeros64(t)/8; s[k] == ',' || asciiSpace(s[k]) {
				return k
			}
		}
	}
	for ; i < len(s); i++ {
		if s[i] == ',' || asciiSpace(s[i]) {
			return i
		}
	}
	return len(s)
}

// mlxSeg reads the fields of one comma-separated segment: "Train loss
// 2.345", "It/sec 1.234", "Peak mem 5.678 GB".
func mlxSeg(u *sdk.Progress, f []string, st *state) {
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
		st.addMetric(name, v)
		break
	}
}

// mlxSegASCII is mlxSeg for ASCII fields, building the name in place.
func mlxSegASCII(u *sdk.Progress, f []string, st *state) {
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
			// strings.ReplaceAll(b, "/sec", "_per_sec"), in place.
			var nb [96]byte
			r := nb[:0]
			for rest := b; ; {
				k := index(string(rest), "/sec")
				if k < 0 {
					r = append(r, rest...)
					break
				}
				r = append(append(r, rest[:k]...), "_per_sec"...)
				rest = rest[k+4:]
			}
			if suffix {
				r = appendLower(append(r, '_'), unit)
			}
			st.addMetric(st.intern(r), v)
			break
		}
		if suffix {
			b = appendLower(append(b, '_'), unit)
		}
		st.addMetric(st.intern(b), v)
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
