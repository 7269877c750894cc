// Package wasmdata rewrites a WebAssembly module's data section: Merge
// turns the tens of thousands of active data segments the Go linker emits
// into a few, so that wazero decodes, evaluates and copies a few segments
// on every load instead of all of them. The module means exactly the same.
package wasmdata

import (
	"cmp"
	"slices"
)

// Merge returns wasm with its active data segments merged
// into a few: runs of segments closer than mergeGap bytes become one
// segment, the gaps filled with zeros. The Go linker splits a module's data
// at every run of zeros, into tens of thousands of segments that wazero
// decodes, evaluates and copies one by one on every load; merged, the module
// means exactly the same (its own memory starts zeroed, the segments do not
// overlap) and loads faster. Anything it does not fully understand (an
// imported memory, passive or non-constant segments, a data count section,
// overlaps) leaves wasm unchanged; so does a module with few segments.
func Merge(wasm []byte) []byte {
	const mergeGap = 4096
	type segment struct {
		off  uint32
		data []byte
	}
	if len(wasm) < 8 || string(wasm[:8]) != "\x00asm\x01\x00\x00\x00" {
		return wasm
	}
	var (
		dataStart, dataEnd int // the data section, id byte to end
		segs               []segment
		memories           int
	)
	for i := 8; i < len(wasm); {
		start := i
		id := wasm[i]
		size, n := uleb32(wasm[i+1:])
		if n == 0 || uint64(i+1+n)+uint64(size) > uint64(len(wasm)) {
			return wasm
		}
		body := wasm[i+1+n : i+1+n+int(size)]
		i += 1 + n + int(size)
		switch id {
		case 2: // imports: a memory import would not start zeroed
			if importsMemory(body) {
				return wasm
			}
		case 5:
			c, n := uleb32(body)
			if n == 0 {
				return wasm
			}
			memories += int(c)
		case 11:
			if dataStart != 0 {
				return wasm
			}
			dataStart, dataEnd = start, i
			count, n := uleb32(body)
			if n == 0 {
				return wasm
			}
			p := body[n:]
			segs = make([]segment, 0, count)
			for k := uint32(0); k < count; k++ {
				// flags 0: active, memory 0, offset (i32.const N; end).
				if len(p) < 2 || p[0] != 0 || p[1] != 0x41 {
					return wasm
				}
				off, n := sleb32(p[2:])
				if n == 0 || len(p) < 3+n || p[2+n] != 0x0b || off < 0 {
					return wasm
				}
				p = p[3+n:]
				l, n := uleb32(p)
				if n == 0 || uint64(len(p)-n) < uint64(l) {
					return wasm
				}
				segs = append(segs, segment{uint32(off), p[n : n+int(l)]})
				p = p[n+int(l):]
			}
			if len(p) != 0 {
				return wasm
			}
		case 12: // data count: instructions may name segments by index
			return wasm
		}
	}
	if dataStart == 0 || memories != 1 || len(segs) < 64 {
		return wasm
	}
	bySegOff := func(a, b segment) int { return cmp.Compare(a.off, b.off) }
	if !slices.IsSortedFunc(segs, bySegOff) {
		slices.SortStableFunc(segs, bySegOff)
	}
	// Runs of segments to merge: [off, end) in memory, segs[first:] on.
	type run struct {
		off, end uint64
		first    int
	}
	var runs []run
	for i, s := range segs {
		end := uint64(s.off) + uint64(len(s.data))
		if end > 1<<32 {
			return wasm
		}
		if k := len(runs) - 1; k >= 0 && uint64(s.off) < runs[k].end {
			return wasm // overlap: the later segment would win
		} else if k >= 0 && uint64(s.off)-runs[k].end <= mergeGap {
			runs[k].end = end
			continue
		}
		runs = append(runs, run{off: uint64(s.off), end: end, first: i})
	}
	// The new section: id, size, count, then per run its header and bytes.
	var hdr [16]byte
	bodySize := len(appendUleb(hdr[:0], uint32(len(runs))))
	for _, r := range runs {
		bodySize += 2 + len(appendSleb(hdr[:0], int32(uint32(r.off)))) + 1 +
			len(appendUleb(hdr[:0], uint32(r.end-r.off))) + int(r.end-r.off)
	}
	size := dataStart + 1 + len(appendUleb(hdr[:0], uint32(bodySize))) + bodySize + len(wasm) - dataEnd
	out := make([]byte, size) // zeroed: the gaps between merged segments
	w := copy(out, wasm[:dataStart])
	put := func(b []byte) { w += copy(out[w:], b) }
	put([]byte{11})
	put(appendUleb(hdr[:0], uint32(bodySize)))
	put(appendUleb(hdr[:0], uint32(len(runs))))
	for k, r := range runs {
		put([]byte{0, 0x41})
		put(appendSleb(hdr[:0], int32(uint32(r.off))))
		put([]byte{0x0b})
		put(appendUleb(hdr[:0], uint32(r.end-r.off)))
		last := len(segs)
		if k+1 < len(runs) {
			last = runs[k+1].first
		}
		for _, s := range segs[r.first:last] {
			copy(out[w+int(uint64(s.off)-r.off):], s.data)
		}
		w += int(r.end - r.off)
	}
	put(wasm[dataEnd:])
	if w != len(out) {
		return wasm // cannot happen: the sizes above are exact
	}
	return out
}

// importsMemory reports whether an import section imports a memory (or
// cannot be read).
func importsMemory(body []byte) bool {
	count, n := uleb32(body)
	if n == 0 {
		return true
	}
	p := body[n:]
	for k := uint32(0); k < count; k++ {
		for range 2 { // module and field names
			l, n := uleb32(p)
			if n == 0 || uint64(len(p)-n) < uint64(l) {
				return true
			}
			p = p[n+int(l):]
		}
		if len(p) == 0 {
			return true
		}
		kind := p[0]
		p = p[1:]
		switch kind {
		case 0: // func: type index
			_, n := uleb32(p)
			if n == 0 {
				return true
			}
			p = p[n:]
		case 1: // table: reftype (funcref, externref), limits
			if len(p) < 1 || (p[0] != 0x70 && p[0] != 0x6f) {
				return true
			}
			if p = skipLimits(p[1:]); p == nil {
				return true
			}
		case 3: // global: valtype (a one-byte one), mutability
			if len(p) < 2 || p[1] > 1 || !slices.Contains([]byte{0x7f, 0x7e, 0x7d, 0x7c, 0x7b, 0x70, 0x6f}, p[0]) {
				return true
			}
			p = p[2:]
		default: // 2 memory, or anything newer
			return true
		}
	}
	return false
}

func skipLimits(p []byte) []byte {
	if len(p) < 1 {
		return nil
	}
	flags := p[0]
	if flags > 1 {
		return nil // shared, 64-bit...: not read here
	}
	p = p[1:]
	for range 1 + int(flags&1) {
		_, n := uleb32(p)
		if n == 0 {
			return nil
		}
		p = p[n:]
	}
	return p
}

// uleb32 decodes an unsigned LEB128 u32; n is 0 when malformed.
func uleb32(b []byte) (v uint32, n int) {
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		if i == 4 && c > 0x0f {
			return 0, 0
		}
		v |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return v, i + 1
		}
		shift += 7
	}
	return 0, 0
}

// sleb32 decodes a signed LEB128 i32; n is 0 when malformed.
func sleb32(b []byte) (v int32, n int) {
	var r int64
	var shift uint
	for i := 0; i < len(b) && i < 5; i++ {
		c := b[i]
		r |= int64(c&0x7f) << shift
		shift += 7
		if c < 0x80 {
			if c&0x40 != 0 {
				r -= 1 << shift
			}
			if r < -1<<31 || r > 1<<31-1 {
				return 0, 0
			}
			return int32(r), i + 1
		}
	}
	return 0, 0
}

func appendUleb(b []byte, v uint32) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

func appendSleb(b []byte, v int32) []byte {
	for {
		c := byte(v & 0x7f)
		v >>= 7
		if (v == 0 && c&0x40 == 0) || (v == -1 && c&0x40 != 0) {
			return append(b, c)
		}
		b = append(b, c|0x80)
	}
}
