// Package runlog is the framed, timestamped log every run writes: one file
// per run holding stdout, stderr, setup output and runbox's own notes as
// separate streams in the order they arrived, with the raw bytes intact.
//
// Record layout (little endian):
//
//	stream  uint8
//	time    int64   unix nanoseconds when the bytes were read
//	length  uint32  payload length, at most MaxPayload
//	payload [length]byte
//
// A writer appends each record with a single write(2), so a reader (or a
// crash) can only ever see a torn record at the very end of the file; readers
// treat that tail as "not written yet" and writers cut it off before appending.
package runlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Stream says where a record's bytes came from.
type Stream uint8

// Streams (stable on disk: never renumber).
const (
	Stdout      Stream = 1
	Stderr      Stream = 2
	SetupStdout Stream = 3
	SetupStderr Stream = 4
	Meta        Stream = 5 // runbox's own notes: "setup: ...", "timed out after 5s"
)

func (s Stream) String() string {
	switch s {
	case Stdout:
		return "stdout"
	case Stderr:
		return "stderr"
	case SetupStdout:
		return "setup-stdout"
	case SetupStderr:
		return "setup-stderr"
	case Meta:
		return "meta"
	}
	return fmt.Sprintf("stream(%d)", uint8(s))
}

// ParseStream maps a stream name back to its Stream.
func ParseStream(name string) (Stream, error) {
	for s := Stdout; s <= Meta; s++ {
		if s.String() == name {
			return s, nil
		}
	}
	return 0, fmt.Errorf("unknown stream %q (want stdout, stderr, setup-stdout, setup-stderr or meta)", name)
}

const (
	headerSize = 13
	// MaxPayload bounds one record; writers split larger writes.
	MaxPayload = 256 << 10
)

// Record is one framed chunk of output.
type Record struct {
	Stream Stream
	Time   time.Time
	Data   []byte
	// Offset is where the record starts in the file; End where the next one does.
	Offset, End int64
}

// ErrCorrupt means a record header is impossible (not a torn tail).
var ErrCorrupt = errors.New("runlog: corrupt record")

// Writer appends records to a log file. It is safe for concurrent use.
type Writer struct {
	mu  sync.Mutex
	f   *os.File
	off int64 // end of the last whole record
	buf []byte
	now func() time.Time
	// dirty: written (or truncated) since the last sync. Close of a log
	// nothing was written to skips the fsync: a short run's end waits on
	// one fsync fewer.
	dirty bool
}

// Create opens path for appending, creating it (mode 0600) if needed and
// cutting off a torn record left at its end by a crash.
func Create(path string) (*Writer, error) {
	sum, err := Scan(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	existed := err == nil
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open log: %w", err)
	}
	if err := f.Truncate(sum.ValidSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("truncate torn log tail: %w", err)
	}
	if _, err := f.Seek(sum.ValidSize, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("seek log: %w", err)
	}
	// A file that was there (a recovered run's, perhaps just cut) is synced
	// at Close even if nothing more is written.
	return &Writer{f: f, off: sum.ValidSize, now: time.Now, dirty: existed}, nil
}

// Write appends p to stream s, stamped now, splitting it into records of at
// most MaxPayload bytes.
func (w *Writer) Write(s Stream, p []byte) error {
	return w.WriteAt(s, w.now(), p)
}

// WriteAt is Write with an explicit timestamp (used when the time comes from
// elsewhere, e.g. Docker's log timestamps).
func (w *Writer) WriteAt(s Stream, t time.Time, p []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(p) > 0 {
		w.dirty = true
	}
	for len(p) > 0 {
		n := min(len(p), MaxPayload)
		need := headerSize + n
		if cap(w.buf) < need {
			w.buf = make([]byte, need)
		}
		b := w.buf[:need]
		b[0] = byte(s)
		binary.LittleEndian.PutUint64(b[1:9], uint64(t.UnixNano()))
		binary.LittleEndian.PutUint32(b[9:13], uint32(n))
		copy(b[headerSize:], p[:n])
		if _, err := w.f.Write(b); err != nil {
			// A short write (disk full) would leave a torn record in the
			// middle of the file once later writes succeed: cut it off.
			_ = w.f.Truncate(w.off)
			_, _ = w.f.Seek(w.off, io.SeekStart)
			return fmt.Errorf("write log: %w", err)
		}
		w.off += int64(need)
		p = p[n:]
	}
	return nil
}

// Sync flushes the file to stable storage.
func (w *Writer) Sync() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.syncLocked()
}

func (w *Writer) syncLocked() error {
	if !w.dirty {
		return nil
	}
	if err := w.f.Sync(); err != nil {
		return err
	}
	w.dirty = false
	return nil
}

// Close syncs (if anything was written since the last sync) and closes
// the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	serr := w.syncLocked()
	cerr := w.f.Close()
	return errors.Join(serr, cerr)
}

// StreamWriter adapts one stream of a Writer to io.Writer.
func (w *Writer) StreamWriter(s Stream) io.Writer { return streamWriter{w, s} }

type streamWriter struct {
	w *Writer
	s Stream
}

func (sw streamWriter) Write(p []byte) (int, error) {
	if err := sw.w.Write(sw.s, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Reader decodes records from a byte stream.
type Reader struct {
	r   *bufio.Reader
	off int64
	hdr [headerSize]byte
	// A record read only in part (the stream ended inside it) is kept here
	// so that Next can resume it once more bytes exist.
	hn   int    // header bytes read so far
	data []byte // payload, allocated once the header is whole
	dn   int    // payload bytes read so far
	// With reuse, every record's Data shares one buffer and is valid only
	// until the next call to Next (no allocation per record).
	reuse bool
	buf   []byte
}

// NewReader reads records from r, whose first byte is at file offset off.
func NewReader(r io.Reader, off int64) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), off: off}
}

// Offset is the file offset just past the last whole record returned.
func (r *Reader) Offset() int64 { return r.off }

// Next returns the next whole record. It returns io.EOF at a clean end and
// io.ErrUnexpectedEOF when the stream ends inside a record (a torn or
// still-being-written tail); in both cases Offset is unchanged and Next may
// be called again once more bytes exist: the part already read is kept.
func (r *Reader) Next() (Record, error) {
	for r.hn < headerSize {
		n, err := r.r.Read(r.hdr[r.hn:])
		r.hn += n
		if r.hn == headerSize {
			break
		}
		if err != nil {
			if errors.Is(err, io.EOF) && r.hn > 0 {
				err = io.ErrUnexpectedEOF
			}
			return Record{}, err
		}
	}
	if r.data == nil {
		n := binary.LittleEndian.Uint32(r.hdr[9:13])
		s := Stream(r.hdr[0])
		if n > MaxPayload || s < Stdout || s > Meta {
			return Record{}, fmt.Errorf("%w at offset %d", ErrCorrupt, r.off)
		}
		if r.reuse && cap(r.buf) >= int(n) {
			r.data = r.buf[:n]
		} else {
			r.data = make([]byte, n)
			if r.reuse {
				r.buf = r.data
			}
		}
		r.dn = 0
	}
	for r.dn < len(r.data) {
		n, err := r.r.Read(r.data[r.dn:])
		r.dn += n
		if r.dn == len(r.data) {
			break
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return Record{}, err
		}
	}
	rec := Record{
		Stream: Stream(r.hdr[0]),
		Time:   time.Unix(0, int64(binary.LittleEndian.Uint64(r.hdr[1:9]))),
		Data:   r.data,
		Offset: r.off,
		End:    r.off + headerSize + int64(len(r.data)),
	}
	r.off = rec.End
	r.hn, r.data, r.dn = 0, nil, 0
	return rec, nil
}

// Summary describes a log file without holding its payloads.
type Summary struct {
	Records   int
	Bytes     map[Stream]int64
	LastTime  time.Time
	ValidSize int64 // size of the prefix made of whole records
}

// Scan walks the record headers of path, seeking over payloads.
func Scan(path string) (Summary, error) {
	sum := Summary{Bytes: map[Stream]int64{}}
	f, err := os.Open(path)
	if err != nil {
		return sum, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return sum, err
	}
	size := st.Size()
	var hdr [headerSize]byte
	off := int64(0)
	for off+headerSize <= size {
		if _, err := f.ReadAt(hdr[:], off); err != nil {
			return sum, fmt.Errorf("scan log: %w", err)
		}
		n := int64(binary.LittleEndian.Uint32(hdr[9:13]))
		s := Stream(hdr[0])
		if n > MaxPayload || s < Stdout || s > Meta {
			return sum, fmt.Errorf("%w at offset %d", ErrCorrupt, off)
		}
		if off+headerSize+n > size {
			break
		}
		sum.Records++
		sum.Bytes[s] += n
		sum.LastTime = time.Unix(0, int64(binary.LittleEndian.Uint64(hdr[1:9])))
		off += headerSize + n
	}
	sum.ValidSize = off
	return sum, nil
}
