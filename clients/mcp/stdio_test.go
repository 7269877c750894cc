package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioAgent is an SDK client talking to the server over the stdio
// transport `runbox mcp` uses, through pipes. raw writes a line to the
// server's stdin as a buggy client would; the server's answers with id
// null (which no request of the SDK client can match) come to nullIDs.
func stdioAgent(t *testing.T, d *testDaemon, workdir string) (a *agent, raw func(string), nullIDs <-chan map[string]any) {
	t.Helper()
	inR, inW := io.Pipe()   // the server's stdin
	outR, outW := io.Pipe() // the server's stdout
	srv := New(d.c, Options{Version: "test", Workdir: workdir})
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Run(ctx, stdioTransport(inR, outW)) }()

	toServer := &lineWriter{w: inW}
	fromServer, fsW := io.Pipe()
	nulls := make(chan map[string]any, 10)
	go func() { // pass the server's lines on to the client, less the id-null ones
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 32<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				if id, ok := m["id"]; ok && id == nil {
					nulls <- m
					continue
				}
			}
			if _, err := fsW.Write(append(sc.Bytes(), '\n')); err != nil {
				return
			}
		}
		fsW.Close()
	}()
	cl := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "stdio-agent", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcpsdk.IOTransport{Reader: fromServer, Writer: toServer}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fromServer.Close()
		cs.Close()
		inW.Close()
		cancel()
		select {
		case <-served:
		case <-time.After(10 * time.Second):
			t.Error("the server did not end when stdin closed")
		}
	})
	raw = func(line string) {
		// A server that stopped reading never takes it: do not block.
		go func() { _, _ = toServer.Write([]byte(line)) }()
	}
	return &agent{t: t, cs: cs}, raw, nulls
}

// A line that is not JSON, or not JSON-RPC, on stdin gets a JSON-RPC error
// (Parse error -32700, Invalid Request -32600) and the session goes on: a
// local_wait in flight at the time still gets its answer.
func TestStdioSurvivesMalformedLines(t *testing.T) {
	d := startDaemon(t)
	a, raw, nulls := stdioAgent(t, d, t.TempDir())
	id := a.start("sleep 1; echo hi", nil)

	var wg sync.WaitGroup
	var waited runOut
	var waitText string
	wg.Add(1)
	go func() {
		defer wg.Done()
		res, err := a.cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "local_wait", Arguments: map[string]any{"run_id": id, "timeout_seconds": 30}})
		if err != nil {
			waitText = "protocol error: " + err.Error()
			return
		}
		waitText = resultText(res)
		b, _ := json.Marshal(res.StructuredContent)
		_ = json.Unmarshal(b, &waited)
	}()
	time.Sleep(200 * time.Millisecond) // local_wait is in flight

	for _, tc := range []struct {
		line string
		code float64
		want string
	}{
		{"this is not json\n", -32700, "Parse error"},
		{`{"foo": 1}` + "\n", -32600, "Invalid Request"},
		{`{"jsonrpc":"2.0","id":1,` + "\n", -32700, "Parse error"},
		{"[]\n", -32600, "empty batch"},
	} {
		raw(tc.line)
		select {
		case m := <-nulls:
			e, _ := m["error"].(map[string]any)
			msg, _ := e["message"].(string)
			if e["code"] != tc.code || !strings.Contains(msg, tc.want) || !strings.Contains(msg, "session goes on") {
				t.Errorf("answer to %q: %v, want code %v and %q", tc.line, m, tc.code, tc.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no JSON-RPC error for %q", tc.line)
		}
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the local_wait in flight got no answer")
	}
	if !waited.Done || waited.State != "succeeded" {
		t.Fatalf("the local_wait in flight: %s", waitText)
	}
	var st runOut
	a.ok("local_status", map[string]any{"run_id": id}, &st) // the session goes on
}
