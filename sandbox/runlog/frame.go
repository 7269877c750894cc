package runlog

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// AppendFrame appends one record in the log's on-disk layout to buf, for
// any stream byte (the daemon API reuses the layout for control frames).
func AppendFrame(buf []byte, stream uint8, t time.Time, data []byte) []byte {
	var hdr [headerSize]byte
	hdr[0] = stream
	binary.LittleEndian.PutUint64(hdr[1:9], uint64(t.UnixNano()))
	binary.LittleEndian.PutUint32(hdr[9:13], uint32(len(data)))
	buf = append(buf, hdr[:]...)
	return append(buf, data...)
}

// MaxFrame bounds a frame read by ReadFrame.
const MaxFrame = 16 << 20

// ReadFrame reads one frame of any stream from r (no stream validation).
// The payload goes into buf when it fits (data then aliases buf), so a
// caller that reuses one buffer reads a stream without an allocation per
// frame.
func ReadFrame(r io.Reader, buf []byte) (stream uint8, t time.Time, data []byte, err error) {
	var hdr [headerSize]byte
	if _, err = io.ReadFull(r, hdr[:]); err != nil {
		return 0, time.Time{}, nil, err
	}
	n := binary.LittleEndian.Uint32(hdr[9:13])
	if n > MaxFrame {
		return 0, time.Time{}, nil, fmt.Errorf("%w: frame of %d bytes", ErrCorrupt, n)
	}
	if cap(buf) >= int(n) {
		data = buf[:n]
	} else {
		data = make([]byte, n)
	}
	if _, err = io.ReadFull(r, data); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return 0, time.Time{}, nil, err
	}
	return hdr[0], time.Unix(0, int64(binary.LittleEndian.Uint64(hdr[1:9]))), data, nil
}
