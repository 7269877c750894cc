// Package tail keeps the end of a stream — and optionally its beginning —
// in bounded memory: the failure tails of a run, a plugin guest's stderr.
package tail

import "sync"

// Buffer keeps the last Max bytes written to it, and with Head > 0 also the
// first Head bytes (a Go guest's "fatal error: ..." line comes first, the
// latest output last). The zero value keeps nothing; it is safe for
// concurrent use.
type Buffer struct {
	mu        sync.Mutex
	head      []byte
	tail      []byte
	headMax   int
	tailMax   int
	truncated bool
}

// New returns a Buffer that keeps the last n bytes.
func New(n int) *Buffer { return &Buffer{tailMax: n} }

// NewHeadTail returns a Buffer that keeps the first and the last n/2 bytes.
func NewHeadTail(n int) *Buffer { return &Buffer{headMax: n / 2, tailMax: n - n/2} }

// Write keeps what p adds; it never fails.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(p)
	if room := b.headMax - len(b.head); room > 0 {
		k := min(room, len(p))
		b.head = append(b.head, p[:k]...)
		p = p[k:]
	}
	if len(p) >= b.tailMax {
		b.truncated = b.truncated || len(p) > b.tailMax || len(b.tail) > 0
		b.tail = append(b.tail[:0], p[len(p)-b.tailMax:]...)
		return n, nil
	}
	if over := len(b.tail) + len(p) - b.tailMax; over > 0 {
		b.tail = append(b.tail[:0], b.tail[over:]...)
		b.truncated = true
	}
	b.tail = append(b.tail, p...)
	return n, nil
}

// Bytes returns a copy of the kept tail (the head is not included).
func (b *Buffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]byte(nil), b.tail...)
}

// String returns what was kept: the head, "\n[...]\n" where bytes were
// dropped between head and tail, and the tail.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.truncated && b.headMax > 0 {
		return string(b.head) + "\n[...]\n" + string(b.tail)
	}
	return string(b.head) + string(b.tail)
}

// Reset forgets everything written.
func (b *Buffer) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.head, b.tail, b.truncated = b.head[:0], b.tail[:0], false
}
