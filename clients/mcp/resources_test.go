package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// resources/read answers a missing run or file with
// -32602, the MCP spec's code for it, as is a refused URI (never code 0),
// takes run ids as the tools do (@last, @last~N, run numbers), tells a
// file named log from the log, and says when the log resource is cut,
// which then starts at a line boundary.
func TestResourceErrorsAndRunIDs(t *testing.T) {
	d := startDaemon(t)
	work, outside := t.TempDir(), t.TempDir()
	writeFile(t, outside, "secret.txt", "do not read")
	if err := os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(work, "filelink")); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, d, work)
	const lines = 300000 // about 2 MB of log
	id := a.start(fmt.Sprintf("mkdir -p sub && echo file > sub/log && seq 1 %d", lines), nil)
	a.waitDone(id)
	ctx := context.Background()
	read := func(uri string) (*mcpsdk.ReadResourceResult, error) {
		return a.cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: uri})
	}
	base := "runbox://runs/" + id
	for _, tc := range []struct {
		uri  string
		code int64
		want string
	}{
		{base + "/files/nosuch.txt", jsonrpc.CodeInvalidParams, "does not exist"},
		{base + "/files/sub", jsonrpc.CodeInvalidParams, "not a regular file"},
		{base + "/files/../../etc/passwd", jsonrpc.CodeInvalidParams, "leaves the workspace"},
		{base + "/files/filelink", jsonrpc.CodeInvalidParams, "out of the workspace"},
		{"runbox://runs/01NOSUCHRUNATALL/log", jsonrpc.CodeInvalidParams, "no run"},
		{"runbox://runs/01NOSUCHRUNATALL/files/x.txt", jsonrpc.CodeInvalidParams, "no run"},
		{"runbox://runs/@last~5/log", jsonrpc.CodeInvalidParams, "no run"},
	} {
		_, err := read(tc.uri)
		var we *jsonrpc.Error
		if !errors.As(err, &we) || we.Code != tc.code || !strings.Contains(we.Message, tc.want) {
			t.Errorf("%s: %v (%T), want code %d and %q", tc.uri, err, err, tc.code, tc.want)
		}
	}
	// Run ids as the tools take them.
	for _, rid := range []string{id, "@last", "%40last", "@last~0", "1"} {
		res, err := read("runbox://runs/" + rid + "/files/sub/log")
		if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "file\n" {
			t.Errorf("file sub/log of run %s: %v %+v", rid, err, res)
		}
		if _, err := read("runbox://runs/" + rid + "/log"); err != nil {
			t.Errorf("log of run %s: %v", rid, err)
		}
	}
	// The log is over 1 MiB: cut, said so, from a line boundary on.
	res, err := read(base + "/log")
	if err != nil {
		t.Fatal(err)
	}
	head, body, _ := strings.Cut(res.Contents[0].Text, "\n")
	if !strings.Contains(head, "local_logs") || !strings.Contains(head, "bytes") {
		t.Errorf("a cut log does not say so: first line %q", head)
	}
	got := strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	first, err := strconv.Atoi(got[0])
	if err != nil || first <= 1 || len(got) != lines-first+1 || got[len(got)-1] != strconv.Itoa(lines) {
		t.Errorf("the cut log starts %q (%d lines), want whole lines up to %d", got[0], len(got), lines)
	}
}
