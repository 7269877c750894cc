package runlog

import (
	"unicode/utf8"
)

// TextDecoder turns one stream's raw bytes into valid UTF-8 for display:
// invalid bytes become U+FFFD, and a multi-byte character split across two
// records is joined rather than replaced. The bytes on disk are untouched.
type TextDecoder struct {
	pending []byte // an incomplete rune carried to the next chunk (≤ 3 bytes)
}

// Decode returns p (with any carried prefix) as valid UTF-8, holding back a
// trailing incomplete rune for the next call.
func (d *TextDecoder) Decode(p []byte) []byte {
	if len(d.pending) > 0 {
		p = append(d.pending, p...)
		d.pending = nil
	}
	// Hold back a trailing rune that may still be completed.
	cut := len(p)
	for i := len(p) - 1; i >= 0 && i >= len(p)-utf8.UTFMax; i-- {
		if utf8.RuneStart(p[i]) {
			if !utf8.FullRune(p[i:]) {
				cut = i
			}
			break
		}
	}
	if cut < len(p) {
		d.pending = append([]byte(nil), p[cut:]...)
		p = p[:cut]
	}
	return replaceInvalid(p)
}

// replaceInvalid returns p with each invalid byte as U+FFFD (p itself when valid).
func replaceInvalid(p []byte) []byte {
	if utf8.Valid(p) {
		return p
	}
	out := make([]byte, 0, len(p)+8)
	for len(p) > 0 {
		r, size := utf8.DecodeRune(p)
		if r == utf8.RuneError && size == 1 {
			out = append(out, "\uFFFD"...)
		} else {
			out = append(out, p[:size]...)
		}
		p = p[size:]
	}
	return out
}

// Flush returns whatever was held back, replaced as invalid exactly as
// Decode would have replaced it mid-stream.
func (d *TextDecoder) Flush() []byte {
	if len(d.pending) == 0 {
		return nil
	}
	p := d.pending
	d.pending = nil
	return replaceInvalid(p)
}

// LineSplitter cuts one stream into lines for parsers, treating "\n", "\r\n"
// and a bare "\r" (a progress bar redrawing itself) as line ends. Lines
// longer than max are cut at max bytes and the rest up to the next line end
// is dropped, so an endless line costs at most max bytes of memory.
type LineSplitter struct {
	max      int
	buf      []byte
	overlong bool
	lastCR   bool
}

// NewLineSplitter returns a splitter that keeps at most max bytes per line.
func NewLineSplitter(max int) *LineSplitter { return &LineSplitter{max: max} }

// Write feeds p and calls emit for each completed line (valid UTF-8, without
// its terminator). The string is emit's own; p is not retained.
func (s *LineSplitter) Write(p []byte, emit func(string)) {
	for len(p) > 0 {
		i := indexEOL(p)
		if i < 0 {
			s.add(p)
			s.lastCR = false
			return
		}
		if p[i] == '\n' && i == 0 && s.lastCR && len(s.buf) == 0 && !s.overlong {
			// second half of "\r\n" split across writes
			s.lastCR = false
			p = p[1:]
			continue
		}
		s.add(p[:i])
		s.flush(emit)
		s.lastCR = p[i] == '\r'
		if p[i] == '\r' && i+1 < len(p) && p[i+1] == '\n' {
			i++
			s.lastCR = false
		}
		p = p[i+1:]
	}
}

// Close emits a final unterminated line, if any.
func (s *LineSplitter) Close(emit func(string)) {
	if len(s.buf) > 0 || s.overlong {
		s.flush(emit)
	}
}

func (s *LineSplitter) add(p []byte) {
	room := s.max - len(s.buf)
	if len(p) > room {
		p = p[:room]
		s.overlong = true
	}
	s.buf = append(s.buf, p...)
}

func (s *LineSplitter) flush(emit func(string)) {
	var d TextDecoder
	line := string(d.Decode(s.buf)) + string(d.Flush())
	s.buf = s.buf[:0]
	s.overlong = false
	emit(line)
}

func indexEOL(p []byte) int {
	for i, c := range p {
		if c == '\n' || c == '\r' {
			return i
		}
	}
	return -1
}
