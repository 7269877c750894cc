package client

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
)

// The client speaks HTTP/1.1 to the daemon itself instead of through
// net/http. Every `runbox` command is a new process, and net/http (with
// crypto/tls and x509 behind it) added ~0.8 ms to each start of the
// binary, for a client that makes one or two requests over a unix socket
// to one known server. What it needs is small: a request line, a few
// headers and a body out; a status line, headers and a sized or chunked
// body back. The daemon serves with net/http; TestWire* hold this client
// to what that server sends.

const (
	methodGet  = "GET"
	methodPost = "POST"
)

// response is the head of the daemon's answer; body reads the payload and
// closes the connection when closed.
type response struct {
	status int
	text   string // the reason phrase
	header textproto.MIMEHeader
	body   io.ReadCloser
}

// roundTrip sends one request on a connection of its own and reads the
// answer's head. No pool and no background goroutine: a CLI process makes
// one or two requests. Cancelling ctx closes the connection, which ends
// any read or write on it.
func (c *Client) roundTrip(ctx context.Context, method, target string, body []byte) (*response, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("talk to the daemon: %w", err)
	}
	if err := writeRequest(conn, method, target, body); err != nil {
		return fail(err)
	}
	br := bufio.NewReader(conn)
	resp, err := readResponse(br, method)
	if err != nil {
		return fail(err)
	}
	resp.body = &connBody{r: resp.body, conn: conn, stop: stop, ctx: ctx}
	return resp, nil
}

// writeRequest writes the request in one write.
func writeRequest(w io.Writer, method, target string, body []byte) error {
	if method == "" || strings.ContainsAny(method+target, " \r\n") || !strings.HasPrefix(target, "/") {
		return fmt.Errorf("bad request line %q %q", method, target)
	}
	var b strings.Builder
	b.Grow(128 + len(body))
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: runbox\r\nUser-Agent: runbox\r\n")
	if body != nil {
		b.WriteString("Content-Type: application/json\r\nContent-Length: " + strconv.Itoa(len(body)) + "\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	_, err := io.WriteString(w, b.String())
	return err
}

// readResponse reads a response head from br and sets up its body: sized
// (Content-Length), chunked, or up to EOF. Informational (1xx) answers
// are skipped.
func readResponse(br *bufio.Reader, method string) (*response, error) {
	tp := textproto.NewReader(br)
	for {
		line, err := tp.ReadLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		proto, rest, _ := strings.Cut(line, " ")
		code, text, _ := strings.Cut(rest, " ")
		status, err := strconv.Atoi(code)
		if !strings.HasPrefix(proto, "HTTP/1.") || len(code) != 3 || err != nil || status < 100 {
			return nil, fmt.Errorf("malformed HTTP status line %q", line)
		}
		header, err := tp.ReadMIMEHeader()
		if err != nil {
			return nil, fmt.Errorf("malformed HTTP header: %w", err)
		}
		if status < 200 && status != 101 {
			continue
		}
		r := &response{status: status, text: text, header: header}
		switch {
		case method == "HEAD" || status == 204 || status == 304 || status/100 == 1:
			r.body = io.NopCloser(strings.NewReader(""))
		case header.Get("Transfer-Encoding") != "":
			if te := header.Values("Transfer-Encoding"); len(te) != 1 || !strings.EqualFold(strings.TrimSpace(te[0]), "chunked") {
				return nil, fmt.Errorf("unsupported Transfer-Encoding %q", te)
			}
			r.body = io.NopCloser(&chunkedReader{r: br})
		case header.Get("Content-Length") != "":
			n, err := strconv.ParseInt(strings.TrimSpace(header.Get("Content-Length")), 10, 64)
			if err != nil || n < 0 {
				return nil, fmt.Errorf("bad Content-Length %q", header.Get("Content-Length"))
			}
			r.body = io.NopCloser(&sizedReader{r: br, n: n})
		default:
			r.body = io.NopCloser(br)
		}
		return r, nil
	}
}

// sizedReader reads exactly n bytes; an early EOF is an error.
type sizedReader struct {
	r io.Reader
	n int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.n {
		p = p[:s.n]
	}
	n, err := s.r.Read(p)
	s.n -= int64(n)
	if err == io.EOF && s.n > 0 {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}

// chunkedReader decodes a chunked body (RFC 9112 §7.1). It hands over
// what has arrived without waiting for the rest of a chunk or for the next
// chunk's header, so a live stream stays live.
type chunkedReader struct {
	r        *bufio.Reader
	n        int64 // bytes left in the current chunk
	checkEnd bool  // the CRLF after a chunk's data is due
	err      error
}

// maxChunkLine bounds a chunk-size line (size plus extensions).
const maxChunkLine = 4096

func (c *chunkedReader) Read(p []byte) (n int, err error) {
	for c.err == nil && len(p) > 0 {
		if c.checkEnd {
			if n > 0 && c.r.Buffered() < 2 {
				break
			}
			if c.err = c.crlf(); c.err != nil {
				break
			}
			c.checkEnd = false
		}
		if c.n == 0 {
			if n > 0 && !c.lineBuffered() {
				break
			}
			c.err = c.beginChunk()
			continue
		}
		want := p
		if int64(len(want)) > c.n {
			want = want[:c.n]
		}
		k, rerr := c.r.Read(want)
		n += k
		p = p[k:]
		c.n -= int64(k)
		if c.n == 0 {
			c.checkEnd = true
		}
		if rerr != nil {
			if rerr == io.EOF {
				rerr = io.ErrUnexpectedEOF
			}
			c.err = rerr
			break
		}
		if c.r.Buffered() == 0 {
			break // nothing more has arrived: hand over what did
		}
	}
	if n > 0 {
		return n, nil
	}
	return 0, c.err
}

// lineBuffered reports whether a whole line is already buffered.
func (c *chunkedReader) lineBuffered() bool {
	b, _ := c.r.Peek(c.r.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

func (c *chunkedReader) crlf() error {
	b, err := c.r.Peek(2)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	if b[0] != '\r' || b[1] != '\n' {
		return errors.New("malformed chunked encoding: no CRLF after chunk data")
	}
	_, _ = c.r.Discard(2)
	return nil
}

// beginChunk reads a chunk-size line; the last chunk (size 0) also reads
// the trailer section and ends the body with io.EOF.
func (c *chunkedReader) beginChunk() error {
	line, err := c.line()
	if err != nil {
		return err
	}
	size, _, _ := strings.Cut(line, ";")
	size = strings.TrimRight(size, " \t")
	n, err := strconv.ParseUint(size, 16, 63)
	if err != nil || size == "" || strings.HasPrefix(size, "+") {
		return fmt.Errorf("malformed chunked encoding: chunk size %q", line)
	}
	if n > 0 {
		c.n = int64(n)
		return nil
	}
	for { // trailer fields, up to an empty line
		t, err := c.line()
		if err != nil {
			return err
		}
		if t == "" {
			return io.EOF
		}
	}
}

// line reads one CRLF-terminated line, without the CRLF.
func (c *chunkedReader) line() (string, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		if errors.Is(err, bufio.ErrBufferFull) || len(b) > maxChunkLine {
			err = errors.New("malformed chunked encoding: line too long")
		}
		return "", err
	}
	if len(b) > maxChunkLine {
		return "", errors.New("malformed chunked encoding: line too long")
	}
	s := strings.TrimSuffix(string(b), "\n")
	return strings.TrimSuffix(s, "\r"), nil
}

// connBody is a response body that owns its connection.
type connBody struct {
	r    io.ReadCloser
	conn net.Conn
	stop func() bool
	ctx  context.Context
}

func (b *connBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err != nil && err != io.EOF && b.ctx.Err() != nil {
		err = b.ctx.Err() // the connection was closed because ctx ended
	}
	return n, err
}

func (b *connBody) Close() error {
	b.stop()
	b.r.Close()
	return b.conn.Close()
}
