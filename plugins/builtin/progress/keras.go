package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Keras 2 and 3 (and tf.keras):
//
//	Epoch 3/10
//	 45/100 [=====>........] - ETA: 12s - loss: 0.1234 - accuracy: 0.9500
//	100/100 [==============] - 5s 50ms/step - loss: 0.1 - val_loss: 0.2
//	 45/100 ━━━━━━━━━━━━━━━━━━━━ 1s 12ms/step - accuracy: 0.9 - loss: 0.1
//	100/100 - 5s - 50ms/step - loss: 0.1          (verbose=2)
func parseKeras(s string, st *state) (u sdk.Progress, ok bool) {
	if strings.HasPrefix(s, "Epoch ") {
		n, m, ok := fraction(s, indexByte(s, '/'))
		if ok && indexByte(s, '/') > 6 && len(strings.Fields(s)) == 2 {
			st.step = 0 // the new epoch's bar has not started
			return sdk.Progress{Source: "keras", Epoch: n, EpochTotal: m}, true
		}
	}
	if index(s, "ETA") < 0 && index(s, "/step") < 0 && index(s, "/sample") < 0 &&
		index(s, "━") < 0 && index(s, "loss") < 0 {
		return u, false
	}
	// A pasted line may hold several redraws ("41/90 [==>..] - ETA: 3s -
	// loss: 0.7 42/90 [==>..] ..."): the last bar is what the screen shows.
	found := false
	var n, m int64
	var rest string
	var keras3 bool
	for off := 0; off < len(s); {
		k := indexByte(s[off:], '/')
		if k < 0 {
			break
		}
		k += off
		off = k + 1
		if strings.HasPrefix(s[k+1:], "Unknown") {
			// "311/Unknown - 640s 2s/step - loss: 3.9": no total yet.
			b := k
			for b > 0 && isDigit(s[b-1]) {
				b--
			}
			if b < k && (b == 0 || s[b-1] == ' ') {
				n, _, _ = parseUint(s, b)
				m, rest, keras3, found = 0, s[k+8:], false, true
			}
			continue
		}
		fn, fm, ok := fraction(s, k)
		if !ok {
			continue
		}
		j := k + 1
		for j < len(s) && isDigit(s[j]) {
			j++
		}
		r, k3, ok := kerasBar(s[j:])
		if !ok {
			continue
		}
		n, m, rest, keras3, found = fn, fm, r, k3, true
	}
	if !found {
		return u, false
	}
	lastDone := st.epoch == st.epochTotal && st.step == st.total // fit is over
	if st.source == "keras" && st.epochTotal > 0 && st.total > 0 && st.step != 0 && (m != st.total || lastDone) {
		// Once an epoch's bar has started, a bar of another size before
		// the next "Epoch" header is model.evaluate's or predict's (a
		// callback's inside the epoch, or after the last one): a side
		// bar, which must not become the run's step or percentage (a
		// "20/20" there sent the percent chart to 100%, issue #24). The
		// header resets the step, so a new epoch's bar of another size
		// is still that epoch's.
		st.side = true
		return u, true
	}
	u = sdk.Progress{Source: "keras", Step: n, Total: m, Percentage: pct(n, m)}
	kerasSegments(rest, n < m && keras3, &u, st)
	return u, true
}

// kerasBar checks what follows "N/M" and returns the text after the bar.
func kerasBar(t string) (rest string, keras3, ok bool) {
	switch {
	case strings.HasPrefix(t, " ["):
		if len(t) < 3 || (t[2] != '=' && t[2] != '.' && t[2] != '>') {
			return "", false, false
		}
		k := indexByte(t, ']')
		if k < 0 {
			return "", false, true // wrapped mid-bar
		}
		return t[k+1:], false, true
	case strings.HasPrefix(t, " ━"):
		i := 1
		for i < len(t) && (t[i] >= 0x80 || t[i] == ' ') {
			i++
		}
		return t[i:], true, true
	case strings.HasPrefix(t, " - "):
		return t, false, true
	}
	return "", false, false
}

// kerasSegments reads " - ETA: 12s - loss: 0.1 - 50ms/step" pieces.
// etaFirst: a bare duration before the rate is the ETA (Keras 3 mid-epoch).
func kerasSegments(rest string, etaFirst bool, u *sdk.Progress, st *state) {
	// The pieces of strings.Split(rest, " - "), without its slice.
	for more := true; more; {
		var seg string
		seg, rest, more = strings.Cut(rest, " - ")
		seg = strings.TrimSpace(seg)
		if seg == "" {
			continue
		}
		if after, ok := strings.CutPrefix(seg, "ETA:"); ok {
			if eta, ok := parseClock(after); ok {
				u.ETASeconds = eta
			}
			continue
		}
		if index(seg, "/step") >= 0 || index(seg, "/sample") >= 0 {
			f := strings.Fields(seg)
			last := f[len(f)-1]
			if v, j, ok := parseNum(last, 0); ok && v > 0 {
				u.Rate, u.RateUnit = v, last[j:]
			}
			if len(f) == 2 && etaFirst {
				if eta, ok := parseClock(f[0]); ok {
					u.ETASeconds = eta
				}
			}
			continue
		}
		if indexByte(seg, ' ') < 0 && etaFirst {
			if eta, ok := parseClock(seg); ok {
				u.ETASeconds = eta
				continue
			}
		}
		scanKV(seg, func(k string, v float64) {
			if !structuralKey(k) {
				st.addMetric(k, v)
			}
		})
	}
}
