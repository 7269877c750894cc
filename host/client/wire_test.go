package client

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// serve runs h with net/http (as the daemon does) on a unix socket and
// returns a client for it.
func serve(t *testing.T, h http.HandlerFunc) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return New(Options{Socket: sock})
}

// serveRaw answers every connection with the bytes reply, after reading
// the request head.
func serveRaw(t *testing.T, reply string) *Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			conn, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if _, err := http.ReadRequest(bufio.NewReader(conn)); err != nil {
					return
				}
				io.WriteString(conn, reply)
			}()
		}
	}()
	return New(Options{Socket: sock})
}

func body(t *testing.T, c *Client, method, path string, in any) ([]byte, error) {
	t.Helper()
	resp, err := c.send(context.Background(), method, path, nil, in)
	if err != nil {
		return nil, err
	}
	defer resp.body.Close()
	return io.ReadAll(resp.body)
}

func TestWireAgainstNetHTTP(t *testing.T) {
	big := make([]byte, 3<<20+17)
	rand.Read(big)
	tests := []struct {
		name string
		h    http.HandlerFunc
		want []byte
	}{
		{"sized", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}, []byte("hello")},
		{"empty", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) }, []byte{}},
		{"chunked, flushed in pieces", func(w http.ResponseWriter, r *http.Request) {
			for off, n := 0, 1; off < len(big); off, n = off+n, n*3+1 {
				end := min(off+n, len(big))
				w.Write(big[off:end])
				w.(http.Flusher).Flush()
			}
		}, big},
		{"chunked with trailer", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Trailer", "X-Sum")
			io.WriteString(w, "abc")
			w.(http.Flusher).Flush()
			io.WriteString(w, "def")
			w.Header().Set("X-Sum", "6")
		}, []byte("abcdef")},
		{"echo of the request body", func(w http.ResponseWriter, r *http.Request) {
			if r.Method != "POST" || r.Header.Get("Content-Type") != "application/json" || r.URL.Path != "/v1/x" || r.URL.Query().Get("q") != "a b" {
				http.Error(w, "bad request "+r.Method+" "+r.URL.String(), 400)
				return
			}
			io.Copy(w, r.Body)
		}, []byte(`{"k":"v"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serve(t, tt.h)
			method, path, in := methodGet, "/v1/x", any(nil)
			if strings.HasPrefix(tt.name, "echo") {
				method, path, in = methodPost, "/v1/x?q=a+b", map[string]string{"k": "v"}
			}
			got, err := body(t, c, method, path, in)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(tt.want))
			}
		})
	}
}

func TestWireErrorAnswers(t *testing.T) {
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/json" {
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":"no run x","code":"not_found"}`)
			return
		}
		http.Error(w, "boom", http.StatusInternalServerError)
	})
	_, err := body(t, c, methodGet, "/json", nil)
	if !IsNotFound(err) || err.Error() != "no run x" {
		t.Errorf("json error: %v", err)
	}
	_, err = body(t, c, methodGet, "/plain", nil)
	var e *Error
	if !errors.As(err, &e) || e.Status != 500 || e.Msg != "daemon answered 500 Internal Server Error" {
		t.Errorf("plain error: %#v", err)
	}
}

// A live stream hands over each chunk as it arrives: the handler waits
// for the client to have read a chunk before it sends the next.
func TestWireStreamsLive(t *testing.T) {
	read := make(chan struct{})
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		for i := range 3 {
			fmt.Fprintf(w, "line %d\n", i)
			w.(http.Flusher).Flush()
			select {
			case <-read:
			case <-time.After(time.Minute):
				return
			}
		}
	})
	resp, err := c.send(context.Background(), methodGet, "/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.body.Close()
	br := bufio.NewReader(resp.body)
	for i := range 3 {
		line, err := br.ReadString('\n')
		if err != nil || line != fmt.Sprintf("line %d\n", i) {
			t.Fatalf("line %d: %q, %v", i, line, err)
		}
		read <- struct{}{}
	}
	if _, err := br.ReadByte(); err != io.EOF {
		t.Fatalf("after the last chunk: %v, want EOF", err)
	}
}

func TestWireCancel(t *testing.T) {
	c := serve(t, func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "first")
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	})
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := c.send(ctx, methodGet, "/", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 5)
	if _, err := io.ReadFull(resp.body, buf); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(20*time.Millisecond, cancel)
	if _, err := resp.body.Read(buf); !errors.Is(err, context.Canceled) {
		t.Fatalf("read after cancel: %v, want context.Canceled", err)
	}
	resp.body.Close()
}

func TestWireMalformed(t *testing.T) {
	tests := []struct{ name, reply, want string }{
		{"not http", "SSH-2.0-OpenSSH\r\n\r\n", "malformed HTTP status line"},
		{"bad status", "HTTP/1.1 2x0 OK\r\n\r\n", "malformed HTTP status line"},
		{"no head", "", "unexpected EOF"},
		{"bad header", "HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "malformed HTTP header"},
		{"short body", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", "unexpected EOF"},
		{"bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "bad Content-Length"},
		{"gzip", "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", "unsupported Transfer-Encoding"},
		{"bad chunk size", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nab\r\n0\r\n\r\n", "chunk size"},
		{"no crlf after chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nabXX0\r\n\r\n", "no CRLF"},
		{"cut in a chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc", "unexpected EOF"},
		{"no last chunk", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n", "unexpected EOF"},
		{"endless size line", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + strings.Repeat("0", 10000), "too long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := serveRaw(t, tt.reply)
			_, err := body(t, c, methodGet, "/", nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// FuzzChunkedReader decodes what net/http's chunked writer encodes, split
// into chunks and read back in pieces of any size.
func FuzzChunkedReader(f *testing.F) {
	f.Add([]byte("hello, world"), uint8(3), false)
	f.Add(bytes.Repeat([]byte{0, '\r', '\n'}, 1000), uint8(1), true)
	f.Fuzz(func(t *testing.T, data []byte, split uint8, oneByte bool) {
		var enc bytes.Buffer
		cw := httputil.NewChunkedWriter(&enc)
		step := int(split) + 1
		for off := 0; off < len(data); off += step {
			cw.Write(data[off:min(off+step, len(data))])
		}
		cw.Close()
		enc.WriteString("\r\n") // no trailers
		var r io.Reader = bytes.NewReader(enc.Bytes())
		if oneByte {
			r = iotest.OneByteReader(r)
		}
		got, err := io.ReadAll(&chunkedReader{r: bufio.NewReaderSize(r, 16)})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("decoded %q, %v; want %q", got, err, data)
		}
	})
}
