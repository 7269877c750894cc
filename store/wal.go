package store

// Reading Pebble's write-ahead log ourselves. Pebble (v2.1) replays the
// newest WAL up to the first chunk it cannot read and treats everything
// after it as the torn tail of a crash: it only looks past a bad chunk in
// the blocks that follow it, so bytes overwritten in the WAL's last 32 KiB
// block are dropped without a word, and with them every write after them.
// A torn tail and corruption differ in one way: after a torn tail there is
// no valid chunk of the same log, after corruption there is. scanWAL looks
// for one (checksum and log number must match, which leftovers of a
// recycled WAL and preallocated zeros never do) and keeps the batches it
// finds past the damage, so a salvage can put them back.
//
// Chunk layout (pebble/record): checksum u32, length u16, encoding u8,
// then for the recyclable and WAL-sync encodings the log number u32, and
// for WAL-sync the synced offset u64; the payload follows. Chunks never
// cross a 32 KiB block; a block's tail too short for a header is zeros.
// The checksum is CRC-32C, masked, over encoding..payload end.

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

const (
	walBlock        = 32 << 10
	walLegacyHeader = 7
	walRecycHeader  = 11
	walSyncHeader   = 19
)

// chunk positions
const (
	posFull = iota + 1
	posFirst
	posMiddle
	posLast
)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

func maskedCRC(b []byte) uint32 {
	c := crc32.Checksum(b, crcTable)
	return (c>>15 | c<<17) + 0xa282ead8
}

// walFile is a WAL in the store directory.
type walFile struct {
	path string
	num  uint64
}

// listWALs returns the store's WAL files, oldest first.
func listWALs(dir string) ([]walFile, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return nil, err
	}
	var out []walFile
	for _, p := range names {
		n, err := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".log"), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, walFile{path: p, num: n})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].num < out[j].num })
	return out, nil
}

// walScan is what one WAL holds.
type walScan struct {
	walFile
	// batches are the batch representations read, in log order: those
	// before the first break and those found past it.
	batches [][]byte
	// breakAt is the offset of the first chunk that could not be read (a
	// torn tail, preallocated zeros or damage), -1 when the log ended
	// cleanly (EOF trailer or end of file).
	breakAt int64
	// resumedAt is the offset of the first valid chunk found past the
	// break, -1 when there is none. A log with one is corrupt: a crash
	// leaves a torn tail, never a hole.
	resumedAt int64
	// after counts the batches found past the break.
	after int
	// sealed is set when the log was closed cleanly after the break (its
	// EOF trailer follows it): the damaged bytes are its last record(s),
	// which a crash cannot tear once the log has been closed.
	sealed bool
}

// corrupt reports whether valid data follows a hole in the log, or the
// log was closed after it.
func (w *walScan) corrupt() bool { return w.resumedAt >= 0 || w.sealed }

// chunk is one parsed chunk header.
type chunk struct {
	pos, header, length int
	logNum              uint32
	hasLogNum           bool
}

// parseChunk reads the chunk at off of buf (which holds off's block from
// its start). ok is false for anything that is not a valid chunk.
func parseChunk(buf []byte, off int) (c chunk, ok bool) {
	if off+walLegacyHeader > len(buf) {
		return c, false
	}
	enc := buf[off+6]
	switch {
	case enc >= 1 && enc <= 4:
		c.pos, c.header = int(enc), walLegacyHeader
	case enc >= 5 && enc <= 8:
		c.pos, c.header, c.hasLogNum = int(enc-4), walRecycHeader, true
	case enc >= 9 && enc <= 12:
		c.pos, c.header, c.hasLogNum = int(enc-8), walSyncHeader, true
	default:
		return c, false
	}
	if off+c.header > len(buf) {
		return c, false
	}
	c.length = int(binary.LittleEndian.Uint16(buf[off+4:]))
	if c.hasLogNum {
		c.logNum = binary.LittleEndian.Uint32(buf[off+7:])
	}
	if off+c.header+c.length > len(buf) {
		return c, false
	}
	sum := binary.LittleEndian.Uint32(buf[off:])
	return c, sum == maskedCRC(buf[off+6:off+c.header+c.length])
}

// scanWAL reads the WAL at f.
func scanWAL(f walFile) (*walScan, error) {
	data, err := os.ReadFile(f.path)
	if err != nil {
		return nil, fmt.Errorf("store: read wal %s: %w", filepath.Base(f.path), err)
	}
	w := &walScan{walFile: f, breakAt: -1, resumedAt: -1}
	logNum := uint32(f.num)
	block := func(off int) []byte {
		start := off - off%walBlock
		return data[start:min(start+walBlock, len(data))]
	}
	// valid says whether a chunk of this log starts at off.
	valid := func(off int) (chunk, bool) {
		b := block(off)
		c, ok := parseChunk(b, off%walBlock)
		if !ok || (c.hasLogNum && c.logNum != logNum) {
			return c, false
		}
		return c, true
	}
	var rec []byte
	inRecord := false
	off := 0
	for off < len(data) {
		in := off % walBlock
		if walBlock-in < walSyncHeader && allZero(block(off)[in:]) {
			off += walBlock - in // the block's zeroed tail
			continue
		}
		c, ok := valid(off)
		if !ok || (inRecord) == (c.pos == posFull || c.pos == posFirst) {
			if w.breakAt < 0 {
				if w.cleanEnd(data, off) {
					return w, nil
				}
				w.breakAt = int64(off)
			}
			next := w.resync(data, off+1, valid)
			if next < 0 {
				// Nothing readable follows: a torn tail, unless the log
				// was closed after the damage. Pebble would drop the
				// damaged record without a word (a run's last transition,
				// say), so that is damage to report and salvage.
				w.sealed = w.breakAt >= 0 && w.resumedAt < 0 && w.trailerAfter(data, off+1)
				return w, nil
			}
			if w.resumedAt < 0 {
				w.resumedAt = int64(next)
			}
			off, rec, inRecord = next, rec[:0], false
			continue
		}
		start := off%walBlock + c.header
		rec = append(rec, block(off)[start:start+c.length]...)
		off += c.header + c.length
		inRecord = c.pos == posFirst || c.pos == posMiddle
		if !inRecord {
			w.batches = append(w.batches, append([]byte(nil), rec...))
			if w.resumedAt >= 0 {
				w.after++
			}
			rec = rec[:0]
		}
	}
	return w, nil
}

// cleanEnd reports whether Pebble's EOF trailer (an empty chunk naming the
// next log number), written when a log is closed, is at off.
func (w *walScan) cleanEnd(data []byte, off int) bool {
	b := data[off-off%walBlock:]
	in := off % walBlock
	if in+walRecycHeader <= len(b) && b[in+6] == 5 && binary.LittleEndian.Uint16(b[in+4:]) == 0 &&
		binary.LittleEndian.Uint32(b[in+7:]) == uint32(w.num)+1 {
		return true
	}
	return false
}

// trailerAfter reports whether the log's EOF trailer (cleanEnd's chunk:
// zero checksum and length, recyclable encoding, the next log number) is
// at or after from with nothing but zeros behind it. A log whose writer
// died mid-record never has one: the trailer is written by Close.
func (w *walScan) trailerAfter(data []byte, from int) bool {
	var want [walRecycHeader]byte
	want[6] = 5
	binary.LittleEndian.PutUint32(want[7:], uint32(w.num)+1)
	end := len(data)
	for end > 0 && data[end-1] == 0 {
		end--
	}
	// The trailer's own zero bytes may have been trimmed with the
	// preallocated tail: look at each offset whose header would reach
	// past the last non-zero byte.
	for off := max(from, end-walRecycHeader); off <= end && off+walRecycHeader <= len(data); off++ {
		if string(data[off:off+walRecycHeader]) == string(want[:]) {
			return true
		}
	}
	return false
}

// resync returns the offset of the first chunk at or after from that
// starts a record of this log, -1 when there is none.
func (w *walScan) resync(data []byte, from int, valid func(int) (chunk, bool)) int {
	want := uint32(w.num)
	for off := from; off+walRecycHeader <= len(data); off++ {
		// A cheap filter first: this runs over the WAL's preallocated
		// tail on every Open. Pebble writes only chunks that carry the
		// log number, and an empty chunk proves too little to resume on.
		if e := data[off+6]; e < 5 || e > 12 || binary.LittleEndian.Uint32(data[off+7:]) != want {
			continue
		}
		if c, ok := valid(off); ok && c.length > 0 && (c.pos == posFull || c.pos == posFirst) {
			return off
		}
	}
	return -1
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// checkWALs scans every WAL in dir and returns the scans and the first
// corrupt one (nil when none is).
func checkWALs(dir string) ([]*walScan, *walScan, error) {
	files, err := listWALs(dir)
	if err != nil {
		return nil, nil, err
	}
	var scans []*walScan
	var bad *walScan
	for _, f := range files {
		s, err := scanWAL(f)
		if err != nil {
			return nil, nil, err
		}
		scans = append(scans, s)
		if bad == nil && s.corrupt() {
			bad = s
		}
	}
	return scans, bad, nil
}
