package store

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// Metric series live under their own table, one key per series, so that a
// reader of one metric does not decode the others:
//
//	h/<run id>\0<metric name>   Series (binary, see encodeSeries)
const metricPfx = "h/"

func metricPrefix(runID string) []byte { return []byte(metricPfx + runID + "\x00") }

func metricKey(runID, name string) []byte { return append(metricPrefix(runID), name...) }

// PutMetrics stores the series of h (replacing what was stored for them).
// Like progress, metric history is committed without fsync: a crash loses
// at most the last second of it, never a state.
func (s *Store) PutMetrics(ctx context.Context, h *MetricHistory) error {
	if h == nil || len(h.Series) == 0 {
		return nil
	}
	return s.writer(ctx, false, func(db *pebble.DB, b *pebble.Batch) error {
		v, err := get(db, runKey(h.RunID))
		if err != nil {
			return err
		}
		if v == nil {
			return notFound("run", h.RunID)
		}
		for _, ser := range h.Series {
			if err := b.Set(metricKey(h.RunID, ser.Name), encodeSeries(ser), nil); err != nil {
				return err
			}
		}
		return nil
	})
}

// Metrics returns the stored metric history of a run; a run with none has
// an empty history (not an error). names, when given, selects series.
func (s *Store) Metrics(ctx context.Context, runID string, names ...string) (*MetricHistory, error) {
	h := &MetricHistory{RunID: runID}
	err := s.reader(ctx, func(db *pebble.DB) error {
		if len(names) > 0 {
			for _, n := range names {
				v, err := get(db, metricKey(runID, n))
				if err != nil || v == nil {
					return err
				}
				ser, err := decodeSeries(n, v)
				if err != nil {
					return err
				}
				h.Series = append(h.Series, ser)
			}
			return nil
		}
		pfx := metricPrefix(runID)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			ser, err := decodeSeries(string(it.Key()[len(pfx):]), it.Value())
			if err != nil {
				return err
			}
			h.Series = append(h.Series, ser)
		}
		return it.Error()
	})
	return h, err
}

// MetricNames lists the names of a run's stored series without decoding them.
func (s *Store) MetricNames(ctx context.Context, runID string) ([]string, error) {
	var out []string
	err := s.reader(ctx, func(db *pebble.DB) error {
		pfx := metricPrefix(runID)
		it, err := db.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
		if err != nil {
			return err
		}
		defer it.Close()
		for ok := it.First(); ok; ok = it.Next() {
			out = append(out, string(it.Key()[len(pfx):]))
		}
		return it.Error()
	})
	return out, err
}

// Series formats: 1 had no NonFinite count (a point's NaN Value stood for
// every gap), 2 adds it after N. Both are read; 2 is written.
const (
	seriesFormat1 = 1
	seriesFormat  = 2
)

// encodeSeries writes a series compactly: 8 bytes per float (NaN and ±Inf
// survive, which JSON could not carry), varints for the rest.
func encodeSeries(s *Series) []byte {
	b := make([]byte, 0, 16+len(s.Points)*41)
	b = append(b, seriesFormat)
	b = binary.AppendUvarint(b, uint64(s.Span))
	b = binary.AppendUvarint(b, uint64(s.Total))
	b = binary.AppendUvarint(b, uint64(len(s.Points)))
	var prevStep, prevTime int64
	for _, p := range s.Points {
		t := p.Time.UnixNano()
		b = binary.AppendVarint(b, p.Step-prevStep)
		b = binary.AppendVarint(b, t-prevTime)
		prevStep, prevTime = p.Step, t
		b = binary.AppendUvarint(b, uint64(p.N))
		b = binary.AppendUvarint(b, uint64(p.NonFinite))
		for _, f := range [3]float64{p.Value, p.Min, p.Max} {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(f))
		}
	}
	return b
}

var errShortSeries = errors.New("truncated")

func decodeSeries(name string, b []byte) (*Series, error) {
	bad := func(err error) (*Series, error) {
		return nil, fmt.Errorf("store: decode metric %q: %w", name, err)
	}
	if len(b) == 0 || b[0] != seriesFormat && b[0] != seriesFormat1 {
		return bad(fmt.Errorf("unknown format"))
	}
	format := b[0]
	b = b[1:]
	uv := func() uint64 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	sv := func() int64 {
		v, n := binary.Varint(b)
		if n <= 0 {
			b = nil
			return 0
		}
		b = b[n:]
		return v
	}
	s := &Series{Name: name, Span: int64(uv()), Total: int64(uv())}
	n := uv()
	if b == nil || n > MaxSeriesPoints*2 {
		return bad(errShortSeries)
	}
	s.Points = make([]MetricPoint, 0, n)
	var step, t int64
	for i := uint64(0); i < n; i++ {
		step += sv()
		t += sv()
		p := MetricPoint{Step: step, Time: time.Unix(0, t).UTC(), N: int64(uv())}
		if format != seriesFormat1 {
			p.NonFinite = int64(uv())
		}
		if len(b) < 24 {
			return bad(errShortSeries)
		}
		p.Value = math.Float64frombits(binary.LittleEndian.Uint64(b))
		p.Min = math.Float64frombits(binary.LittleEndian.Uint64(b[8:]))
		p.Max = math.Float64frombits(binary.LittleEndian.Uint64(b[16:]))
		b = b[24:]
		if format == seriesFormat1 && math.IsNaN(p.Value) {
			p.NonFinite = p.N // format 1 kept a NaN Value only for a bucket of gaps
		}
		s.Points = append(s.Points, p)
	}
	return s, nil
}
