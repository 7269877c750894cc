// Package progress is runbox's default progress plugin: it reads what a
// person would read off a training job's screen (tqdm and Lightning bars,
// Keras, Hugging Face Trainer, MLX-LM, XGBoost/LightGBM, fastai,
// detectron2/MMCV, generic "Step 45/100" lines and the runbox
// ##PROGRESS## contract) and turns it into sdk.Progress updates.
//
// Parse is stateless: everything it needs to remember between batches
// comes back in ParseInput.Last. It is built as a wasip1 reactor by
// ./wasm and embedded by plugins/builtin.
//
// Nested bars: a tqdm bar whose description is just an epoch word
// ("Epoch", "Epochs", "epoch") is the outer epoch bar; it sets Epoch and
// EpochTotal only (plus Percentage while no inner bar has given a total).
// Any other bar is the step bar: Step, Total, Percentage, rate and ETA.
// A description "Epoch 3" or "Epoch 3/10" sets the epoch and is still the
// step bar. The last redraw wins, as on the screen.
package progress

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// state is what Parse knows while it walks one batch.
type state struct {
	total      int64    // step total known so far (inner bar)
	source     string   // format of the latest update
	fastaiCols []string // fastai table header, if known
	glued      string   // text printed right after a bar, to parse next
}

func newState(last *sdk.Progress) *state {
	st := &state{}
	if last == nil {
		return st
	}
	st.total = last.Total
	st.source = last.Source
	if last.Source == "fastai" {
		st.fastaiCols = fastaiColsFromMessage(last.Message)
	}
	return st
}

func (st *state) apply(u *sdk.Progress) {
	if u.Total != 0 {
		st.total = u.Total
	}
	if u.Source != "" {
		st.source = u.Source
	}
}

// Parse turns a batch of lines into progress updates, in order.
func Parse(in sdk.ParseInput) sdk.ParseOutput {
	var out sdk.ParseOutput
	var st *state
	for _, raw := range in.Lines {
		pre, f, special := scanLine(raw)
		if !pre {
			continue
		}
		var s string
		if special {
			s = clean(raw)
			f = classify(s)
		} else {
			// s is a substring of raw: raw's markers cover s's, and a
			// marker s lacks only runs a parser that declines.
			s = trimPlain(raw)
		}
		if len(s) < 3 {
			continue
		}
		if st == nil {
			st = newState(in.Last)
		}
		if u, ok := parseLine(s, f, st); ok {
			out.Updates = st.emit(out.Updates, u)
		}
		// At most one glued piece per line: a glued piece's own glued
		// text is dropped.
		if g := st.glued; g != "" {
			st.glued = ""
			if u, ok := parseLine(g, classify(g), st); ok {
				out.Updates = st.emit(out.Updates, u)
			}
			st.glued = ""
		}
	}
	return out
}

// emit sanitises u, records it in st and appends it to us.
func (st *state) emit(us []sdk.Progress, u sdk.Progress) []sdk.Progress {
	if u.Percentage < 0 || u.Percentage > 100 || !finite(u.Percentage) {
		u.Percentage = 0
	}
	if !finite(u.Rate) || u.Rate < 0 {
		u.Rate, u.RateUnit = 0, ""
	}
	if !finite(u.ETASeconds) || u.ETASeconds < 0 {
		u.ETASeconds = 0
	}
	st.apply(&u)
	return append(us, u)
}

// clean strips what the terminal or a paste adds around the text: ANSI
// escapes, carriage returns, markdown quote markers and surrounding space.
func clean(s string) string {
	if strings.IndexByte(s, 0x1b) >= 0 {
		s = stripANSI(s)
	}
	if k := strings.LastIndexByte(s, '\r'); k >= 0 {
		// The host splits on \r; a stray one left here means the text after
		// the last one is what the screen shows.
		if rest := strings.TrimSpace(s[k+1:]); rest != "" {
			s = rest
		} else {
			s = s[:k]
		}
	}
	return trimPlain(s)
}

// trimPlain is clean for a line without ESC and CR bytes.
func trimPlain(s string) string {
	s = strings.TrimSpace(s)
	for len(s) > 0 && s[0] == '>' {
		s = strings.TrimLeft(s[1:], " ")
	}
	return s
}

// stripANSI removes CSI (ESC [ ... final), OSC (ESC ] ... BEL/ST) and
// two-byte escape sequences.
func stripANSI(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != 0x1b {
			b.WriteByte(c)
			continue
		}
		if i+1 >= len(s) {
			break
		}
		switch s[i+1] {
		case '[':
			j := i + 2
			for j < len(s) && (s[j] < 0x40 || s[j] > 0x7e) {
				j++
			}
			i = j
		case ']':
			j := i + 2
			for j < len(s) && s[j] != 0x07 && !(s[j] == 0x1b && j+1 < len(s) && s[j+1] == '\\') {
				j++
			}
			if j < len(s) && s[j] == 0x1b {
				j++
			}
			i = j
		default:
			i++
		}
	}
	return b.String()
}
