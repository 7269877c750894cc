package sdk

import (
	"math/bits"
	"runtime"
	"unsafe"
)

// Word-at-a-time scanning shared by the JSON encoder and decoder. In a
// guest run under wazero with call timeouts on (close on context done),
// every loop iteration, taken jump and non-inlined call leaves the
// compiled code to check for a timeout, so strings are scanned eight bytes
// per step, and up to 32 bytes per loop iteration.

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainRun returns how many leading bytes of s need no attention inside a
// JSON string: printable ASCII other than " and \ (and, with html, other
// than <, > and &).
func plainRun(s string, html bool) int {
	var hm uint64 // msb when html: no branch in the loop
	if html {
		hm = msb
	}
	i := 0
	for ; i+32 <= len(s); i += 32 {
		x0, x1, x2, x3 := load8(s[i:]), load8(s[i+8:]), load8(s[i+16:]), load8(s[i+24:])
		// (x - 0x20*lsb) &^ x flags bytes < 0x20, x itself bytes >= 0x80.
		t0 := (hasByte(x0, '"')|hasByte(x0, '\\')|((x0-0x20*lsb)&^x0)|x0)&msb | (hasByte(x0, '<')|hasByte(x0, '>')|hasByte(x0, '&'))&hm
		t1 := (hasByte(x1, '"')|hasByte(x1, '\\')|((x1-0x20*lsb)&^x1)|x1)&msb | (hasByte(x1, '<')|hasByte(x1, '>')|hasByte(x1, '&'))&hm
		t2 := (hasByte(x2, '"')|hasByte(x2, '\\')|((x2-0x20*lsb)&^x2)|x2)&msb | (hasByte(x2, '<')|hasByte(x2, '>')|hasByte(x2, '&'))&hm
		t3 := (hasByte(x3, '"')|hasByte(x3, '\\')|((x3-0x20*lsb)&^x3)|x3)&msb | (hasByte(x3, '<')|hasByte(x3, '>')|hasByte(x3, '&'))&hm
		if t0|t1|t2|t3 != 0 {
			switch {
			case t0 != 0:
				return i + bits.TrailingZeros64(t0)/8
			case t1 != 0:
				return i + 8 + bits.TrailingZeros64(t1)/8
			case t2 != 0:
				return i + 16 + bits.TrailingZeros64(t2)/8
			}
			return i + 24 + bits.TrailingZeros64(t3)/8
		}
	}
	for ; i+16 <= len(s); i += 16 {
		x, y := load8(s[i:]), load8(s[i+8:])
		t := (hasByte(x, '"')|hasByte(x, '\\')|((x-0x20*lsb)&^x)|x)&msb | (hasByte(x, '<')|hasByte(x, '>')|hasByte(x, '&'))&hm
		u := (hasByte(y, '"')|hasByte(y, '\\')|((y-0x20*lsb)&^y)|y)&msb | (hasByte(y, '<')|hasByte(y, '>')|hasByte(y, '&'))&hm
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		if u != 0 {
			return i + 8 + bits.TrailingZeros64(u)/8
		}
	}
	if i+8 <= len(s) {
		x := load8(s[i:])
		t := (hasByte(x, '"')|hasByte(x, '\\')|((x-0x20*lsb)&^x)|x)&msb | (hasByte(x, '<')|hasByte(x, '>')|hasByte(x, '&'))&hm
		if t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
		i += 8
	}
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || html && (c == '<' || c == '>' || c == '&') {
			return i
		}
	}
	return i
}

// highRun returns how many leading bytes of s are >= 0x80. A valid UTF-8
// string's multi-byte characters lie within such runs, so checking the
// runs checks the string, one step per eight bytes of them.
func highRun(s string) int {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		if t := ^load8(s[i:]) & msb; t != 0 {
			return i + bits.TrailingZeros64(t)/8
		}
	}
	for i < len(s) && s[i] >= 0x80 {
		i++
	}
	return i
}

// load8 reads s[0:8] as a little-endian word (len(s) >= 8). Byte loads
// are portable (any endianness, alignment) and merged into one load on
// amd64 and arm64; the Go compiler does not merge them on wasm, where a
// single (unaligned, little-endian) i64.load does it.
func load8(s string) uint64 {
	_ = s[7]
	if runtime.GOARCH == "wasm" {
		return *(*uint64)(unsafe.Pointer(unsafe.StringData(s)))
	}
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// hasByte sets the top bit of the lowest byte of x equal to c (higher ones
// may be set spuriously, only the lowest counts).
func hasByte(x uint64, c byte) uint64 {
	y := x ^ (lsb * uint64(c))
	return (y - lsb) &^ y
}
