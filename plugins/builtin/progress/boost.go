package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// XGBoost and LightGBM evaluation lines:
//
//	[10]	train-rmse:0.12345	eval-rmse:0.23456
//	[0]	train-rmse:17.5+0.1	test-rmse:17.6+0.5     (xgb.cv: mean+std)
//	[10]	valid_0's l2: 0.123	valid_0's l1: 0.2
//
// "[LightGBM] [Info] ..." lines are not progress.
func parseBoost(s string, st *state) (u sdk.Progress, ok bool) {
	k := index(s, "]\t")
	if k < 0 {
		return u, false
	}
	b := k
	for b > 0 && isDigit(s[b-1]) {
		b--
	}
	if b == k || b == 0 || s[b-1] != '[' {
		return u, false
	}
	if a := strings.TrimRight(s[:b-1], " "); len(a) > 0 && len(a) < b-1 && isLetter(a[len(a)-1]) {
		return u, false // "Epoch[13] Batch [600]\t...": a named counter, not a round
	}
	n, _, _ := parseUint(s, b)
	u.Source = "xgboost"
	// The fields of strings.Split(s[k+2:], "\t"), without its slice.
	for rest, more := s[k+2:], true; more; {
		var f string
		f, rest, more = strings.Cut(rest, "\t")
		c := strings.LastIndexByte(f, ':')
		if c <= 0 {
			continue
		}
		key := strings.TrimSpace(f[:c])
		v, _, ok := parseNum(f, skipSpaces(f, c+1))
		if !ok || key == "" {
			continue
		}
		if index(key, "'s ") >= 0 {
			u.Source = "lightgbm"
		}
		st.addMetric(key, v)
	}
	if len(st.metrics) == 0 {
		return sdk.Progress{}, false
	}
	u.Step = n
	return u, true
}
