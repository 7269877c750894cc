package runlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("0123456789"), MaxPayload/10+100) // splits into two records
	writes := []struct {
		s Stream
		p []byte
	}{
		{Stdout, []byte("hello\n")},
		{Stderr, []byte("\xff\xfe raw bytes")},
		{SetupStdout, []byte("setup")},
		{SetupStderr, []byte("setup err")},
		{Meta, []byte("timed out")},
		{Stdout, big},
	}
	t0 := time.Unix(1700000000, 123)
	for i, wr := range writes {
		if err := w.WriteAt(wr.s, t0.Add(time.Duration(i)), wr.p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	var got []Record
	if err := ReadAll(path, func(r Record) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != len(writes)+1 {
		t.Fatalf("%d records, want %d", len(got), len(writes)+1)
	}
	for i, wr := range writes[:5] {
		r := got[i]
		if r.Stream != wr.s || !bytes.Equal(r.Data, wr.p) || !r.Time.Equal(t0.Add(time.Duration(i))) {
			t.Errorf("record %d = %v %q %v", i, r.Stream, r.Data, r.Time)
		}
		if i > 0 && r.Offset != got[i-1].End {
			t.Errorf("record %d starts at %d, previous ends at %d", i, r.Offset, got[i-1].End)
		}
	}
	if len(got[5].Data) != MaxPayload || !bytes.Equal(append(got[5].Data, got[6].Data...), big) {
		t.Errorf("large write split as %d+%d bytes", len(got[5].Data), len(got[6].Data))
	}

	sum, err := Scan(path)
	if err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if sum.Records != 7 || sum.ValidSize != st.Size() || sum.Bytes[Stdout] != int64(6+len(big)) || !sum.LastTime.Equal(t0.Add(5)) {
		t.Fatalf("summary %+v (file %d bytes)", sum, st.Size())
	}
}

func TestStreamNames(t *testing.T) {
	for s := Stdout; s <= Meta; s++ {
		if got, err := ParseStream(s.String()); err != nil || got != s {
			t.Errorf("ParseStream(%q) = %v, %v", s.String(), got, err)
		}
	}
	if _, err := ParseStream("stdin"); err == nil {
		t.Error("unknown stream parsed")
	}
}

func TestCreateCutsTornTail(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	w, _ := Create(path)
	w.Write(Stdout, []byte("whole"))
	w.Close()
	good, _ := os.Stat(path)

	// A crash mid-record: a header promising 100 bytes, 3 of them written.
	f, _ := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	torn := []byte{byte(Stdout), 0, 0, 0, 0, 0, 0, 0, 0, 100, 0, 0, 0, 'a', 'b', 'c'}
	f.Write(torn)
	f.Close()

	sum, err := Scan(path)
	if err != nil || sum.ValidSize != good.Size() || sum.Records != 1 {
		t.Fatalf("scan of torn log: %+v, %v", sum, err)
	}
	w, err = Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w.Write(Stderr, []byte("after"))
	w.Close()
	var data []string
	ReadAll(path, func(r Record) error { data = append(data, r.Stream.String()+":"+string(r.Data)); return nil })
	if len(data) != 2 || data[0] != "stdout:whole" || data[1] != "stderr:after" {
		t.Fatalf("records after reopen: %q", data)
	}
}

func TestCorrupt(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	os.WriteFile(path, bytes.Repeat([]byte{0xff}, 64), 0o600)
	if _, err := Scan(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("scan: %v, want ErrCorrupt", err)
	}
	if _, err := Create(path); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("create: %v, want ErrCorrupt", err)
	}
}

// TestReaderResumes feeds a record a few bytes at a time: Next reports the
// unfinished tail, then returns the whole record once the rest arrives.
func TestReaderResumes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log")
	w, _ := Create(path)
	w.Write(Meta, []byte("first"))
	w.Write(Stdout, []byte("second record"))
	w.Close()
	full, _ := os.ReadFile(path)

	pr := &growingReader{}
	r := NewReader(pr, 0)
	var got []string
	for i := 0; i <= len(full); i++ {
		pr.data = full[:i]
		for {
			rec, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
					t.Fatal(err)
				}
				break
			}
			got = append(got, string(rec.Data))
		}
	}
	if len(got) != 2 || got[0] != "first" || got[1] != "second record" || r.Offset() != int64(len(full)) {
		t.Fatalf("records %q, offset %d of %d", got, r.Offset(), len(full))
	}
}

// growingReader is a file being appended to: reads past its end give EOF.
type growingReader struct {
	data []byte
	off  int
}

func (g *growingReader) Read(p []byte) (int, error) {
	if g.off >= len(g.data) {
		return 0, io.EOF
	}
	n := copy(p, g.data[g.off:])
	g.off += n
	return n, nil
}

func TestFollow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.log") // not created yet: Follow waits for it
	done := make(chan struct{})
	got := make(chan int, 1)
	const n = 2000
	go func() {
		count := 0
		err := Follow(context.Background(), path, 0, done, func(r Record) error {
			if string(r.Data) != "line\n" {
				t.Errorf("record %q", r.Data)
			}
			count++
			return nil
		})
		if err != nil {
			t.Error(err)
		}
		got <- count
	}()
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		w.Write(Stdout, []byte("line\n"))
	}
	w.Close()
	close(done) // everything written before this must be delivered
	if c := <-got; c != n {
		t.Fatalf("followed %d records, want %d", c, n)
	}

	t.Run("from offset", func(t *testing.T) {
		sum, _ := Scan(path)
		w, _ := Create(path)
		w.Write(Stderr, []byte("new"))
		w.Close()
		var data []string
		closed := make(chan struct{})
		close(closed)
		Follow(context.Background(), path, sum.ValidSize, closed, func(r Record) error {
			data = append(data, string(r.Data))
			return nil
		})
		if len(data) != 1 || data[0] != "new" {
			t.Fatalf("records from offset: %q", data)
		}
	})
	t.Run("context", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		if err := Follow(ctx, path, 0, nil, func(Record) error { return nil }); !errors.Is(err, context.Canceled) {
			t.Fatalf("err %v, want context.Canceled", err)
		}
	})
	t.Run("callback error", func(t *testing.T) {
		stop := errors.New("stop")
		if err := Follow(context.Background(), path, 0, nil, func(Record) error { return stop }); !errors.Is(err, stop) {
			t.Fatalf("err %v, want fn's error", err)
		}
	})
}
