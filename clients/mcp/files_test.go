package mcp

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestFilesInAndOut: an agent puts an input into a plan's workspace, the
// run reads it and writes results (text and binary); the agent lists what
// the run wrote and reads it back, paged, as tool results and as
// runbox:// resources, and reads the run's log as a resource.
func TestFilesInAndOut(t *testing.T) {
	d := startDaemon(t)
	work := t.TempDir()
	a := newAgent(t, d, work)
	writeFile(t, work, "old.txt", "before the run")
	var p planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "mkdir -p out && tr a-z A-Z < in/data.txt > out/upper.txt && printf '\\000\\001\\377' > out/blob.bin && echo done"}, &p)
	var put putOut
	a.ok("local_put_file", map[string]any{"plan_id": p.PlanID, "path": "in/data.txt", "content": "hello "}, &put)
	a.ok("local_put_file", map[string]any{"plan_id": p.PlanID, "path": "in/data.txt", "content": base64.StdEncoding.EncodeToString([]byte("world")), "encoding": "base64", "append": true}, &put)
	if put.Size != 11 || put.Path != "in/data.txt" {
		t.Fatalf("put: %+v", put)
	}
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
	if r := a.waitDone(e.RunID); r.State != "succeeded" {
		t.Fatalf("run: %+v", r)
	}

	var list listOut
	a.ok("local_list_files", map[string]any{"run_id": e.RunID}, &list)
	written := map[string]bool{}
	for _, f := range list.Files {
		written[f.Path] = f.WrittenByRun
	}
	if !written["out/upper.txt"] || !written["out/blob.bin"] || written["old.txt"] {
		t.Errorf("written_by_run: %v", written)
	}
	// Paged listing: one at a time covers them all, in the same order.
	var paged []string
	for off := 0; ; {
		var l listOut
		a.ok("local_list_files", map[string]any{"run_id": e.RunID, "limit": 1, "offset": off}, &l)
		for _, f := range l.Files {
			paged = append(paged, f.Path)
		}
		off = l.NextOffset
		if !l.More {
			break
		}
	}
	if len(paged) != len(list.Files) {
		t.Errorf("paged %v, whole %d", paged, len(list.Files))
	}

	var rd readOut
	a.ok("local_read_file", map[string]any{"run_id": e.RunID, "path": "out/upper.txt"}, &rd)
	if rd.Encoding != "text" || rd.Text != "HELLO WORLD" || !rd.EOF {
		t.Errorf("read text: %+v", rd)
	}
	a.ok("local_read_file", map[string]any{"run_id": e.RunID, "path": "out/upper.txt", "offset": 6, "max_bytes": 3}, &rd)
	if rd.Text != "WOR" || rd.NextOffset != 9 || rd.EOF {
		t.Errorf("paged read: %+v", rd)
	}
	a.ok("local_read_file", map[string]any{"run_id": e.RunID, "path": "out/blob.bin"}, &rd)
	if b, _ := base64.StdEncoding.DecodeString(rd.Base64); rd.Encoding != "base64" || string(b) != "\x00\x01\xff" {
		t.Errorf("read binary: %+v", rd)
	}

	ctx := context.Background()
	res, err := a.cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "runbox://runs/" + e.RunID + "/files/out/upper.txt"})
	if err != nil || len(res.Contents) != 1 || res.Contents[0].Text != "HELLO WORLD" {
		t.Errorf("file resource: %v %+v", err, res)
	}
	res, err = a.cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "runbox://runs/" + e.RunID + "/files/out/blob.bin"})
	if err != nil || len(res.Contents) != 1 || string(res.Contents[0].Blob) != "\x00\x01\xff" {
		t.Errorf("binary resource: %v %+v", err, res)
	}
	res, err = a.cs.ReadResource(ctx, &mcpsdk.ReadResourceParams{URI: "runbox://runs/" + e.RunID + "/log"})
	if err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "done") {
		t.Errorf("log resource: %v %+v", err, res)
	}
	tmpl, err := a.cs.ListResourceTemplates(ctx, nil)
	if err != nil || len(tmpl.ResourceTemplates) != 2 {
		t.Errorf("templates: %v %+v", err, tmpl)
	}
}

// TestFilesStayInTheWorkspace: "..", absolute paths and symlinks out of
// the workspace (a directory link and a file link, as a run could leave)
// are refused for put, read and list; the same target is readable and
// writable outside MCP (the attack's target is real); an upload over the
// limits is refused with what to do.
func TestFilesStayInTheWorkspace(t *testing.T) {
	d := startDaemon(t)
	work, outside := t.TempDir(), t.TempDir()
	secret := writeFile(t, outside, "secret.txt", "do not read")
	if err := os.Symlink(outside, filepath.Join(work, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, filepath.Join(work, "filelink")); err != nil {
		t.Fatal(err)
	}
	a := newAgent(t, d, work)
	var p planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "true"}, &p)
	for _, path := range []string{"../x.txt", "a/../../x.txt", "/etc/passwd", "dirlink/secret.txt", "filelink", "dirlink/new.txt"} {
		if msg := a.fails("local_read_file", map[string]any{"plan_id": p.PlanID, "path": path}); strings.Contains(msg, "do not read") {
			t.Errorf("read %s leaked: %s", path, msg)
		}
		a.fails("local_put_file", map[string]any{"plan_id": p.PlanID, "path": path, "content": "pwned"})
	}
	if b, _ := os.ReadFile(secret); string(b) != "do not read" {
		t.Errorf("the secret was overwritten: %q", b)
	}
	if _, err := os.Stat(filepath.Join(outside, "new.txt")); err == nil {
		t.Error("a file was created outside the workspace")
	}
	if msg := a.fails("local_list_files", map[string]any{"plan_id": p.PlanID, "path": "dirlink"}); !strings.Contains(msg, "out of the workspace") {
		t.Errorf("list through a symlink: %s", msg)
	}
	if msg := a.fails("local_read_file", map[string]any{"plan_id": p.PlanID, "path": "../x"}); !strings.Contains(msg, "leaves the workspace") {
		t.Errorf("..: %s", msg)
	}
	// Uploads over the limits.
	big := strings.Repeat("a", maxPutBytes+1)
	if msg := a.fails("local_put_file", map[string]any{"plan_id": p.PlanID, "path": "big.txt", "content": big}); !strings.Contains(msg, "8 MiB") {
		t.Errorf("over a call's limit: %s", msg)
	}
	if err := os.WriteFile(filepath.Join(work, "grown.bin"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(filepath.Join(work, "grown.bin"), maxPutFile); err != nil {
		t.Fatal(err)
	}
	if msg := a.fails("local_put_file", map[string]any{"plan_id": p.PlanID, "path": "grown.bin", "content": "x", "append": true}); !strings.Contains(msg, "64 MiB") {
		t.Errorf("over a file's limit: %s", msg)
	}
	if msg := a.fails("local_put_file", map[string]any{"plan_id": p.PlanID, "path": "b.bin", "content": "!!notbase64", "encoding": "base64"}); !strings.Contains(msg, "base64") {
		t.Errorf("bad base64: %s", msg)
	}
	if msg := a.fails("local_put_file", map[string]any{"path": "b.txt", "content": "x"}); !strings.Contains(msg, "plan_id") {
		t.Errorf("no workspace named: %s", msg)
	}
}

// written_by_run is bounded by the run's end: a file uploaded after it,
// or written by a later run in the same workdir, is not the run's output.
func TestWrittenByRunEndsWithTheRun(t *testing.T) {
	d := startDaemon(t)
	work := t.TempDir()
	a := newAgent(t, d, work)
	first := a.start("echo one > first.txt", nil)
	a.waitDone(first)
	time.Sleep(50 * time.Millisecond) // past the file clock's granularity
	var put putOut
	a.ok("local_put_file", map[string]any{"run_id": first, "path": "uploaded.txt", "content": "mine"}, &put)
	second := a.start("echo two > second.txt", nil)
	a.waitDone(second)
	var list listOut
	a.ok("local_list_files", map[string]any{"run_id": first}, &list)
	written := map[string]bool{}
	for _, f := range list.Files {
		written[f.Path] = f.WrittenByRun
	}
	if !written["first.txt"] || written["uploaded.txt"] || written["second.txt"] {
		t.Errorf("written_by_run of the first run: %v, want only first.txt", written)
	}
}
