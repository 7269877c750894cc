package mcp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's stdio transport ends the session on the first line it cannot
// decode (its reader returns the error, and the connection closes), which
// loses every call in flight. stdioTransport puts a guard in front of it:
// each line that is not JSON, or not a JSON-RPC message, is answered here
// with a JSON-RPC error (id null, as JSON-RPC 2.0 says when the id cannot
// be read) and never reaches the SDK; the session goes on.

// maxLine bounds one message, as the SDK's own reader does.
const maxLine = mcpsdk.DefaultMaxLineLength

// stdioTransport serves MCP over in (requests, one JSON-RPC message a
// line) and out (answers).
func stdioTransport(in io.Reader, out io.Writer) mcpsdk.Transport {
	pr, pw := io.Pipe()
	w := &lineWriter{w: out}
	go guardLines(in, pw, w)
	return &mcpsdk.IOTransport{Reader: pr, Writer: w}
}

// lineWriter serialises the SDK's writes and the guard's answers: each
// Write is one whole message.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// Close leaves stdout open: the process's, not the session's.
func (l *lineWriter) Close() error { return nil }

// guardLines copies the valid lines of in to pw and answers the others on
// out, until in ends or the SDK closes its side.
func guardLines(in io.Reader, pw *io.PipeWriter, out io.Writer) {
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(r)
		if tooLong {
			reply(out, nil, jsonrpc.CodeInvalidRequest, fmt.Sprintf("message %d is longer than %d MiB: send smaller messages (put large files with local_put_file in pieces); the session goes on", n, maxLine>>20))
		} else if len(line) > 0 {
			if code, msg := check(line); code != 0 {
				reply(out, idOf(line), code, fmt.Sprintf("%s (message %d); send each JSON-RPC 2.0 message as one JSON object on one line; the session goes on", msg, n))
			} else if _, werr := pw.Write(append(line, '\n')); werr != nil {
				return // the SDK closed the session
			}
		} else {
			n--
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// readLine reads one line without its end (\n or \r\n) and surrounding
// blanks; a line over maxLine is skipped and reported.
func readLine(r *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		chunk, e := r.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > maxLine {
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if e == bufio.ErrBufferFull {
			continue
		}
		return bytes.TrimSpace(line), tooLong, e
	}
}

// check says why line is not a JSON-RPC message (a request, notification
// or response, or a batch of them), as a JSON-RPC error code and message;
// code 0: it is one.
// A good message is decoded once here (and once more by the SDK); whether
// a bad one is JSON at all is asked only then.
func check(line []byte) (int, string) {
	msgs := []json.RawMessage{line}
	if line[0] == '[' {
		if err := json.Unmarshal(line, &msgs); err != nil || len(msgs) == 0 {
			if err != nil {
				return notJSON(line)
			}
			return jsonrpc.CodeInvalidRequest, "Invalid Request: an empty batch"
		}
	}
	for _, m := range msgs {
		if _, err := jsonrpc.DecodeMessage(m); err != nil {
			if !json.Valid(line) {
				return notJSON(line)
			}
			return jsonrpc.CodeInvalidRequest, fmt.Sprintf("Invalid Request: not a JSON-RPC 2.0 message (%v)", err)
		}
	}
	return 0, ""
}

// notJSON is the parse error of a line that is not JSON.
func notJSON(line []byte) (int, string) {
	var v any
	err := json.Unmarshal(line, &v)
	return jsonrpc.CodeParseError, fmt.Sprintf("Parse error: the message is not JSON (%v)", err)
}

// idOf is the id of a single message that is JSON but not JSON-RPC, when
// it has a usable one (so the caller's request gets its answer), else nil.
func idOf(line []byte) any {
	var m struct {
		ID any `json:"id"`
	}
	if line[0] != '{' || json.Unmarshal(line, &m) != nil {
		return nil
	}
	if id, err := jsonrpc.MakeID(m.ID); err != nil || !id.IsValid() {
		return nil
	}
	return m.ID
}

// reply writes a JSON-RPC error response (id nil: null).
func reply(out io.Writer, id any, code int, msg string) {
	b, _ := json.Marshal(struct {
		JSONRPC string        `json:"jsonrpc"`
		ID      any           `json:"id"`
		Error   jsonrpc.Error `json:"error"`
	}{"2.0", id, jsonrpc.Error{Code: int64(code), Message: msg}})
	_, _ = out.Write(append(b, '\n'))
}
