package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// detectron2 and OpenMMLab (MMCV runner, mmengine) training logs:
//
//	[11/22 10:00:00 d2.utils.events]:  eta: 0:10:00  iter: 199  total_loss: 1.234  lr: 0.0025  max_mem: 1234M
//	Epoch [1][50/500]	lr: 1.000e-02, eta: 0:10:00, time: 0.5, loss: 1.2
//	Epoch(train)  [1][ 50/500]  lr: 1.0000e-02  eta: 0:10:00  loss: 1.2
//	Iter(train) [  50/1000]  lr: 1.0000e-02  eta: 0:10:00  loss: 1.2
func parseMM(s string, st *state) (u sdk.Progress, ok bool) {
	if k := index(s, "iter:"); k >= 0 && (k == 0 || !isWordByte(s[k-1])) {
		n, _, ok := parseUint(s, skipSpaces(s, k+5))
		if !ok {
			return u, false
		}
		u = sdk.Progress{Source: "detectron2", Step: n}
		mmRest(s, &u, st)
		return u, true
	}
	for _, kw := range []string{"Epoch", "Iter"} {
		k := index(s, kw)
		if k < 0 || (k > 0 && isLetter(s[k-1])) {
			continue
		}
		i := k + len(kw)
		phase := "train"
		if i < len(s) && s[i] == '(' {
			e := indexByte(s[i:], ')')
			if e < 0 {
				continue
			}
			phase = s[i+1 : i+e]
			i += e + 1
		}
		if i < len(s) && s[i] == ':' {
			i++ // torchvision/DeiT MetricLogger: "Epoch: [2]  [10/1504]"
		}
		i = skipSpaces(s, i)
		if i >= len(s) || s[i] != '[' {
			continue
		}
		var epoch int64
		if kw == "Epoch" {
			v, j, ok := parseUint(s, skipSpaces(s, i+1))
			j = skipSpaces(s, j)
			if !ok || j+1 >= len(s) || s[j] != ']' {
				continue
			}
			if j = skipSpaces(s, j+1); j >= len(s) || s[j] != '[' {
				continue
			}
			epoch, i = v, j
		}
		// [ 50/500]
		j := skipSpaces(s, i+1)
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		n, m, ok := fraction(s, j)
		if !ok {
			// mmengine validation summary: "Epoch(val) [1][100/100]" handled
			// above; a bare "[500]" has no fraction.
			continue
		}
		if phase == "val" {
			phase = "validation"
		}
		u = sdk.Progress{Source: "mmcv", Epoch: epoch, Step: n, Total: m, Percentage: pct(n, m), Phase: phase}
		mmRest(s[j:], &u, st)
		return u, true
	}
	return u, false
}

func mmRest(s string, u *sdk.Progress, st *state) {
	if k := index(s, "eta:"); k >= 0 {
		if eta, ok := parseClock(etaToken(strings.TrimSpace(s[k+4:]))); ok {
			u.ETASeconds = eta
		}
	}
	scanKV(s, func(k string, v float64) {
		if !structuralKey(k) {
			st.addMetric(k, v)
		}
	})
	if len(st.metrics) == 0 {
		// PyTorch's ImageNet example: "Loss 4.1234e+00 (4.2000e+00)",
		// tab-separated, no ':'.
		st.metrics = spacedLoss(s, st.metrics)
	}
	// Hand-written loops mix the two: "Loss:0.38 (Avg 0.55) LR 1.00e-03".
	kvSpaced(s, st)
}

// etaToken cuts "0:10:00, time: ..." or "1 day, 2:03:04  iter: ..." to
// the duration itself.
func etaToken(t string) string {
	end := strings.IndexAny(t, " ,")
	if end < 0 {
		return t
	}
	if strings.HasPrefix(t[end:], " day") {
		c := indexByte(t[end:], ',')
		if c < 0 {
			return t
		}
		after := strings.TrimLeft(t[end+c+1:], " ")
		if e := strings.IndexAny(after, " ,"); e >= 0 {
			after = after[:e]
		}
		return t[:end] + " day, " + after
	}
	return t[:end]
}
