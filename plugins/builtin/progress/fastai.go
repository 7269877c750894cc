package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// fastai's console table (fastprogress) and bars:
//
//	epoch     train_loss  valid_loss  accuracy  time
//	0         0.123456    0.234567    0.950000  00:12
//	|████████----------| 45.00% [45/100 00:10<00:12 0.1234]
//
// Rows carry no names, and the header usually arrives in an earlier batch
// than the rows, so the header is kept in Progress.Message as
// "fastai columns: epoch train_loss ..." (with Source "fastai") and read
// back from ParseInput.Last. Without a header, a row is still accepted when
// it looks exactly like fastai's (int, floats with six decimals or #na#,
// mm:ss): its columns are named train_loss, valid_loss, metric_1, ...
// The epoch column is shown as printed (0-based), so epoch 0 is not
// reported (zero means unknown in sdk.Progress).
const fastaiPrefix = "fastai columns: "

func fastaiColsFromMessage(m string) []string {
	if rest, ok := strings.CutPrefix(m, fastaiPrefix); ok {
		return strings.Fields(rest)
	}
	return nil
}

// fl is s's classify bits.
func parseFastai(s string, fl uint64, st *state) (u sdk.Progress, ok bool) {
	if fl&fPctBracket != 0 {
		if k := index(s, "% ["); k >= 0 {
			return fastprogressBar(s, k)
		}
	}
	if strings.HasPrefix(s, "epoch") {
		f := strings.Fields(s)
		if len(f) >= 3 && f[0] == "epoch" && f[len(f)-1] == "time" && index(s, "train_loss") >= 0 {
			st.fastaiCols = f
			return sdk.Progress{Source: "fastai", Phase: "train", Message: fastaiPrefix + strings.Join(f, " ")}, true
		}
		return u, false
	}
	if !isDigit(s[0]) {
		return u, false
	}
	ep, j, _ := parseUint(s, 0)
	if j+7 > len(s) || s[j:j+7] != "       " {
		return u, false
	}
	f := strings.Fields(s)
	if len(f) < 3 {
		return u, false
	}
	if _, ok := parseClock(f[len(f)-1]); !ok || indexByte(f[len(f)-1], ':') < 0 {
		return u, false
	}
	names := st.fastaiCols
	if len(names) != len(f) {
		names = nil
	}
	u = sdk.Progress{Source: "fastai", Epoch: ep, Phase: "train"}
	for i := 1; i < len(f)-1; i++ {
		if f[i] == "#na#" {
			continue
		}
		v, e, ok := parseNum(f[i], 0)
		if !ok || e != len(f[i]) {
			return sdk.Progress{}, false
		}
		name := ""
		switch {
		case names != nil:
			name = names[i]
		case decimals(f[i]) != 6:
			return sdk.Progress{}, false
		case i == 1:
			name = "train_loss"
		case i == 2:
			name = "valid_loss"
		default:
			name = "metric_" + itoa(int64(i-2))
		}
		st.addMetric(name, v)
	}
	return u, true
}

func decimals(f string) int {
	k := indexByte(f, '.')
	if k < 0 {
		return 0
	}
	return len(f) - k - 1
}

func itoa(n int64) string {
	if n == 0 {
		return "0"
	}
	var b [20]byte
	i := len(b)
	for n > 0 {
		i--
		b[i] = byte('0' + n%10)
		n /= 10
	}
	return string(b[i:])
}

// fastprogressBar reads "|██---| 45.00% [45/100 00:10<00:12 0.1234]".
func fastprogressBar(s string, k int) (u sdk.Progress, ok bool) {
	b := k
	for b > 0 && (isDigit(s[b-1]) || s[b-1] == '.') {
		b--
	}
	p, _, ok := parseNum(s, b)
	if !ok || b == k || p > 100 {
		return u, false
	}
	n, j, ok := parseUint(s, k+3)
	if !ok || j >= len(s) || s[j] != '/' {
		return u, false
	}
	m, j, ok := parseUint(s, j+1)
	if !ok || m == 0 || n > m {
		return u, false
	}
	u = sdk.Progress{Source: "fastai", Step: n, Total: m, Percentage: pct(n, m)}
	rest := s[j:]
	if lt := indexByte(rest, '<'); lt >= 0 {
		t := rest[lt+1:]
		if e := strings.IndexAny(t, " ]"); e >= 0 {
			t = t[:e]
		}
		if eta, ok := parseClock(t); ok {
			u.ETASeconds = eta
		}
	}
	return u, true
}
