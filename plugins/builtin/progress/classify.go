package progress

import (
	"math/bits"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Feature bits found by classify: the markers the format parsers look
// for. Each parser runs only when the markers it cannot do without are
// present, so a line costs one pass plus the parsers that can match it.
const (
	fRunbox     uint64 = 1 << iota // ##PROGRESS##
	fPctBar                        // %|
	fPctBracket                    // "% ["
	fHeavy                         // ━
	fSlashS                        // /s (it/s, /s], /s,, /step, /sample)
	fSlashI                        // /i (s/it)
	fDigitSlash                    // a digit then '/'
	fETA                           // ETA
	fBrace                         // {
	fBracket                       // [
	fBracketTab                    // "]\t"
	fEpochCap                      // Epoch
	fEpochLow                      // epoch
	fEpochUp                       // EPOCH
	fStepCap                       // Step
	fStepLow                       // step
	fStepUp                        // STEP
	fIterCap                       // Iter
	fIterLow                       // iter
	fIterUp                        // ITER
	fIterColon                     // iter:
	fIterSpace                     // "Iter "
	fBatchCap                      // Batch
	fBatchLow                      // batch
	fProgCap                       // Progress
	fProgLow                       // progress
	fLossLow                       // loss
	fLossCap                       // Loss
	fLossUp                        // LOSS
	fStarting                      // Starting training
)

const (
	fLossAny = fLossLow | fLossCap | fLossUp
	fGeneric = fEpochCap | fEpochLow | fEpochUp | fStepCap | fStepLow | fStepUp |
		fIterCap | fIterLow | fIterUp | fBatchCap | fBatchLow | fProgCap | fProgLow | fLossAny
)

// lineMark marks the bytes scanLine looks at: mPre where a Prefilter
// literal starts, mClass for the classify markers, mRaw for ESC and CR
// (the line needs clean's slow path).
const (
	mPre = 1 << iota
	mClass
	mRaw
)

var lineMark = func() (t [256]uint8) {
	for _, p := range Prefilter {
		t[p[0]] |= mPre
	}
	for _, c := range []byte("#%\xe2/[]{ESsIiBbPpLle") {
		t[c] |= mClass
	}
	t[0x1b] |= mRaw
	t['\r'] |= mRaw
	return t
}()

func hasAt(s string, i int, w string) bool {
	return len(s)-i >= len(w) && s[i:i+len(w)] == w
}

// scanLine is hasPrefilter and classify in one pass over s; raw reports
// an ESC or CR byte.
func scanLine(s string) (pre bool, f uint64, raw bool) {
	// Sixteen positions at a time; only the hot ones (see hot) go
	// through the loop below.
	for b := 0; b < len(s); b += 16 {
		var hm uint32
		if b+18 <= len(s) {
			hm = uint32(hot(s, b)) | uint32(hot(s, b+1))<<1 | uint32(hot(s, b+2))<<2 | uint32(hot(s, b+3))<<3 |
				uint32(hot(s, b+4))<<4 | uint32(hot(s, b+5))<<5 | uint32(hot(s, b+6))<<6 | uint32(hot(s, b+7))<<7 |
				uint32(hot(s, b+8))<<8 | uint32(hot(s, b+9))<<9 | uint32(hot(s, b+10))<<10 | uint32(hot(s, b+11))<<11 |
				uint32(hot(s, b+12))<<12 | uint32(hot(s, b+13))<<13 | uint32(hot(s, b+14))<<14 | uint32(hot(s, b+15))<<15
		} else {
			hm = uint32(hotEnd(s, b)) | uint32(hotEnd(s, b+1))<<1 | uint32(hotEnd(s, b+2))<<2 | uint32(hotEnd(s, b+3))<<3 |
				uint32(hotEnd(s, b+4))<<4 | uint32(hotEnd(s, b+5))<<5 | uint32(hotEnd(s, b+6))<<6 | uint32(hotEnd(s, b+7))<<7 |
				uint32(hotEnd(s, b+8))<<8 | uint32(hotEnd(s, b+9))<<9 | uint32(hotEnd(s, b+10))<<10 | uint32(hotEnd(s, b+11))<<11 |
				uint32(hotEnd(s, b+12))<<12 | uint32(hotEnd(s, b+13))<<13 | uint32(hotEnd(s, b+14))<<14 | uint32(hotEnd(s, b+15))<<15
		}
		for ; hm != 0; hm &= hm - 1 {
			i := b + bits.TrailingZeros32(hm)
			c := s[i]
			m := lineMark[c]
			if m == 0 {
				continue
			}
			if m&mPre != 0 && !pre && i+1 < len(s) {
				k := uint16(c)<<8 | uint16(s[i+1])
				if pairs[k>>6]&(1<<(k&63)) != 0 {
					for _, p := range byFirst[c] {
						if len(s)-i >= len(p) && s[i+1] == p[1] && s[i:i+len(p)] == p {
							pre = true
							break
						}
					}
				}
			}
			if m&mRaw != 0 {
				raw = true
				continue
			}
			if m&mClass == 0 {
				continue
			}
			switch c {
			case '#':
				if hasAt(s, i, "##PROGRESS##") {
					f |= fRunbox
				}
			case '%':
				if i+1 < len(s) {
					if s[i+1] == '|' {
						f |= fPctBar
					} else if s[i+1] == ' ' && i+2 < len(s) && s[i+2] == '[' {
						f |= fPctBracket
					}
				}
			case 0xe2:
				if hasAt(s, i, "━") {
					f |= fHeavy
				}
			case '/':
				if i > 0 && isDigit(s[i-1]) {
					f |= fDigitSlash
				}
				if i+1 < len(s) {
					if s[i+1] == 's' {
						f |= fSlashS
					} else if s[i+1] == 'i' {
						f |= fSlashI
					}
				}
			case '[':
				f |= fBracket
			case ']':
				if i+1 < len(s) && s[i+1] == '\t' {
					f |= fBracketTab
				}
			case '{':
				f |= fBrace
			case 'E':
				if hasAt(s, i, "ETA") {
					f |= fETA
				} else if hasAt(s, i, "Epoch") {
					f |= fEpochCap
				} else if hasAt(s, i, "EPOCH") {
					f |= fEpochUp
				}
			case 'e':
				if hasAt(s, i, "epoch") {
					f |= fEpochLow
				}
			case 'S':
				if hasAt(s, i, "Step") {
					f |= fStepCap
				} else if hasAt(s, i, "STEP") {
					f |= fStepUp
				} else if hasAt(s, i, "Starting training") {
					f |= fStarting
				}
			case 's':
				if hasAt(s, i, "step") {
					f |= fStepLow
				}
			case 'I':
				if hasAt(s, i, "Iter") {
					f |= fIterCap
					if hasAt(s, i+4, " ") {
						f |= fIterSpace
					}
				} else if hasAt(s, i, "ITER") {
					f |= fIterUp
				}
			case 'i':
				if hasAt(s, i, "iter") {
					f |= fIterLow
					if hasAt(s, i+4, ":") {
						f |= fIterColon
					}
				}
			case 'B':
				if hasAt(s, i, "Batch") {
					f |= fBatchCap
				}
			case 'b':
				if hasAt(s, i, "batch") {
					f |= fBatchLow
				}
			case 'P':
				if hasAt(s, i, "Progress") {
					f |= fProgCap
				}
			case 'p':
				if hasAt(s, i, "progress") {
					f |= fProgLow
				}
			case 'L':
				if hasAt(s, i, "Loss") {
					f |= fLossCap
				} else if hasAt(s, i, "LOSS") {
					f |= fLossUp
				}
			case 'l':
				if hasAt(s, i, "loss") {
					f |= fLossLow
				}
			}
		}
	}
	return pre, f, raw
}

// classify finds, in one pass over s, which markers it contains.
func classify(s string) uint64 {
	_, f, _ := scanLine(s)
	return f
}

// parseLine runs the parsers that can match s, most specific first; the
// gates below only skip a parser that could not accept s.
func parseLine(s string, f uint64, st *state) (u sdk.Progress, ok bool) {
	if f&fRunbox != 0 {
		return parseRunbox(s)
	}
	if f&(fPctBar|fHeavy|fSlashS|fSlashI) != 0 {
		if u, ok = parseTqdm(s, st); ok {
			return u, true
		}
	}
	if f&fDigitSlash != 0 && f&(fEpochCap|fETA|fSlashS|fHeavy|fLossLow) != 0 {
		if u, ok = parseKeras(s); ok {
			return u, true
		}
	}
	if f&fBrace != 0 && f&(fEpochLow|fLossLow) != 0 {
		if u, ok = parseHFDict(s, st); ok {
			return u, true
		}
	}
	if f&(fStarting|fIterSpace) != 0 {
		if u, ok = parseMLX(s, st); ok {
			return u, true
		}
	}
	if f&fIterColon != 0 || f&(fEpochCap|fIterCap) != 0 && f&fBracket != 0 {
		if u, ok = parseMM(s); ok {
			return u, true
		}
	}
	if f&fBracketTab != 0 {
		if u, ok = parseBoost(s); ok {
			return u, true
		}
	}
	if f&fPctBracket != 0 || isDigit(s[0]) || strings.HasPrefix(s, "epoch") {
		if u, ok = parseFastai(s, f, st); ok {
			return u, true
		}
	}
	if f&fGeneric == 0 {
		return u, false
	}
	if f&(fEpochCap|fStepLow) != 0 && f&fBrace == 0 {
		if u, ok = parseHFBanner(s, f); ok {
			return u, true
		}
	}
	return parseGeneric(s, f)
}
