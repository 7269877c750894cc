package mcp

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// Files in and out of a workspace, for agents: put an input file where a
// planned run will find it, list what a run wrote, read it back (text
// inline, anything else as base64), without pasting either through a
// command. Every path is relative to the workspace and opened through
// os.Root, so neither ".." nor a symlink (the run's own, made to point
// out) reaches anything outside it.

// Size limits (stated in the tools' descriptions).
const (
	maxPutBytes    = 8 << 20  // decoded content of one local_put_file call
	maxPutFile     = 64 << 20 // a file built with append
	defaultRead    = 64 << 10 // local_read_file's default max_bytes
	maxRead        = 1 << 20  // its most
	defaultList    = 200
	maxList        = 1000
	maxWalk        = 100000 // entries looked at by one listing
	maxResourceLen = 1 << 20
)

const (
	descPut  = `Put a file into a plan's or a run's workspace (give plan_id or run_id) before or while it runs, so the command finds it there: path is relative to the workspace (no "..", no absolute path; a symlink out of the workspace is refused), missing directories are made. content is UTF-8 text (encoding "text", the default) or base64 (encoding "base64") for binary files. At most 8 MiB of content per call; with append: true the content is added to the end of the file, so a larger file (at most 64 MiB) goes up in pieces. Replaces an existing file unless append is set.`
	descList = `List the files in a run's (or plan's) workspace: path (relative), size, modification time, whether the run wrote or changed it (written_by_run: modified while the run ran, between its start and its end; by modification time only, so a file that something else changed in that time, e.g. another run in the same workdir or your own local_put_file, is marked too, and a file the run wrote that was changed again after it ended is not) and a runbox:// resource URI. path narrows to a directory (default: the whole workspace). Paged: at most limit entries (default 200, at most 1000) from offset (default 0); next_offset says where to go on.`
	descRead = `Read a file from a run's (or plan's) workspace, paged: max_bytes (default 65536, at most 1048576) from offset (default 0). Text (valid UTF-8) comes back in text; anything else in base64 (encoding says which). next_offset and eof say whether more follows. The same file is the MCP resource runbox://runs/RUN_ID/files/PATH; the run's output is runbox://runs/RUN_ID/log.`
)

type putIn struct {
	PlanID   string `json:"plan_id,omitempty" jsonschema:"the plan whose workspace gets the file (or give run_id)"`
	RunID    string `json:"run_id,omitempty" jsonschema:"the run whose workspace gets the file (or give plan_id)"`
	Path     string `json:"path" jsonschema:"the file's path relative to the workspace, e.g. data/input.csv"`
	Content  string `json:"content" jsonschema:"the file's content: text, or base64 with encoding base64 (at most 8 MiB decoded)"`
	Encoding string `json:"encoding,omitempty" jsonschema:"text (default) or base64"`
	Append   bool   `json:"append,omitempty" jsonschema:"add to the end of the file instead of replacing it (default false); the file may grow to 64 MiB"`
}

type putOut struct {
	Workspace string `json:"workspace" jsonschema:"the workspace directory on this machine"`
	Path      string `json:"path"`
	Size      int64  `json:"size" jsonschema:"the file's size now, in bytes"`
	Written   int64  `json:"written" jsonschema:"bytes written by this call"`
	URI       string `json:"uri,omitempty" jsonschema:"the file as an MCP resource (runs only)"`
}

type listIn struct {
	PlanID string `json:"plan_id,omitempty" jsonschema:"a plan whose workspace to list (or give run_id)"`
	RunID  string `json:"run_id,omitempty" jsonschema:"a run whose workspace to list (or give plan_id)"`
	Path   string `json:"path,omitempty" jsonschema:"a directory in the workspace to list (default: the whole workspace)"`
	Offset int    `json:"offset,omitempty" jsonschema:"skip this many entries (default 0): the next_offset of an earlier call"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many entries (default 200, at most 1000)"`
}

type fileEntry struct {
	Path         string `json:"path"`
	Size         int64  `json:"size"`
	Modified     string `json:"modified" jsonschema:"RFC 3339"`
	WrittenByRun bool   `json:"written_by_run" jsonschema:"modified while the run ran (after it started and, once it ended, not after its end); by modification time, so anything else writing the same workdir meanwhile counts too"`
	URI          string `json:"uri,omitempty"`
}

type listOut struct {
	Workspace  string      `json:"workspace"`
	Files      []fileEntry `json:"files"`
	NextOffset int         `json:"next_offset" jsonschema:"pass as offset to list on; equal to offset + len(files)"`
	More       bool        `json:"more" jsonschema:"more entries follow"`
}

type readIn struct {
	PlanID   string `json:"plan_id,omitempty" jsonschema:"a plan whose workspace holds the file (or give run_id)"`
	RunID    string `json:"run_id,omitempty" jsonschema:"a run whose workspace holds the file (or give plan_id)"`
	Path     string `json:"path" jsonschema:"the file's path relative to the workspace"`
	Offset   int64  `json:"offset,omitempty" jsonschema:"byte offset to read from (default 0)"`
	MaxBytes int    `json:"max_bytes,omitempty" jsonschema:"read at most this many bytes (default 65536, at most 1048576)"`
}

type readOut struct {
	Path       string `json:"path"`
	Size       int64  `json:"size"`
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	EOF        bool   `json:"eof" jsonschema:"nothing follows next_offset"`
	Encoding   string `json:"encoding" jsonschema:"text or base64"`
	Text       string `json:"text,omitempty"`
	Base64     string `json:"base64,omitempty"`
	URI        string `json:"uri,omitempty"`
}

func (s *server) registerFiles(srv *mcpsdk.Server) {
	put := inferIn[putIn]()
	put.Properties["encoding"].Enum = []any{"text", "base64"}
	put.Properties["path"].MinLength = new(1)
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "local_put_file", Title: "Put a file into a workspace", Description: descPut, InputSchema: put}, s.putFile)
	list := inferIn[listIn]()
	list.Properties["offset"].Minimum = new(0.0)
	list.Properties["limit"].Minimum, list.Properties["limit"].Maximum = new(1.0), new(float64(maxList))
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "local_list_files", Title: "List a workspace's files", Description: descList, InputSchema: list,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}, s.listFiles)
	read := inferIn[readIn]()
	read.Properties["path"].MinLength = new(1)
	read.Properties["offset"].Minimum = new(0.0)
	read.Properties["max_bytes"].Minimum, read.Properties["max_bytes"].Maximum = new(1.0), new(float64(maxRead))
	mcpsdk.AddTool(srv, &mcpsdk.Tool{Name: "local_read_file", Title: "Read a file from a workspace", Description: descRead, InputSchema: read,
		Annotations: &mcpsdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true}}, s.readFile)
	srv.AddResourceTemplate(&mcpsdk.ResourceTemplate{
		URITemplate: "runbox://runs/{+run_id}/files/{+path}", Name: "run-file", Title: "A file in a run's workspace",
		Description: "A file of a run's workspace (at most 1 MiB; page larger ones with local_read_file). Text as text, anything else as a blob. run_id as the tools take it (@last, @last~1, a run number or prefix work).",
	}, s.readResource)
	srv.AddResourceTemplate(&mcpsdk.ResourceTemplate{
		URITemplate: "runbox://runs/{+run_id}/log", Name: "run-log", Title: "A run's output", MIMEType: "text/plain",
		Description: "A run's output (stdout, stderr and setup, interleaved; a smoke run's first, marked), the last 1 MiB: a longer log starts at a line boundary after a first line saying it was cut (page all of it with local_logs). run_id as the tools take it (@last, @last~1, a run number or prefix work).",
	}, s.readResource)
}

// span is when a run ran: started zero when it has not started, ended
// zero while it goes on.
type span struct{ started, ended time.Time }

// wrote reports whether a file modified at t was modified while the run
// ran.
func (s span) wrote(t time.Time) bool {
	return !s.started.IsZero() && !t.Before(s.started) && (s.ended.IsZero() || !t.After(s.ended))
}

// workspace is the workspace of the plan or run named, its run id ("" for
// a plan) and when that run ran.
func (s *server) workspace(ctx context.Context, planID, runID string) (dir, id string, ran span, err error) {
	switch {
	case planID != "" && runID != "":
		return "", "", span{}, toolError("give plan_id or run_id, not both")
	case runID != "":
		r, err := s.c.Get(ctx, runID)
		if err != nil {
			return "", "", span{}, daemonError(err, "run", runID)
		}
		if r.StartedAt != nil {
			ran.started = *r.StartedAt
			if r.EndedAt != nil {
				ran.ended = *r.EndedAt
			}
		}
		return r.Spec.Workdir, r.ID, ran, nil
	case planID != "":
		p, err := s.c.GetPlan(ctx, planID)
		if err != nil {
			return "", "", span{}, daemonError(err, "plan", planID)
		}
		return p.Workdir, "", span{}, nil
	}
	return "", "", span{}, toolError("give plan_id (from compute_plan) or run_id (from local_execute)")
}

// relPath checks a path an agent gave: relative, inside the workspace by
// its words (os.Root checks the symlinks). It returns it cleaned, with
// forward slashes.
func relPath(p string, dirOK bool) (string, error) {
	if p == "" || p == "." {
		if dirOK {
			return ".", nil
		}
		return "", toolError("path is empty: give the file's path relative to the workspace, e.g. data/input.csv")
	}
	if strings.ContainsRune(p, 0) {
		return "", toolError("path %q holds a NUL byte", p)
	}
	if filepath.IsAbs(p) || strings.HasPrefix(p, "/") {
		return "", toolError("path %q is absolute: give it relative to the workspace", p)
	}
	c := path.Clean(filepath.ToSlash(p))
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", toolError("path %q leaves the workspace: give a path inside it, without ..", p)
	}
	return c, nil
}

// rootError says why os.Root refused a path.
func rootError(p string, err error) error {
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return toolError("%s does not exist in the workspace (local_list_files shows what does)", p)
	case strings.Contains(err.Error(), "escapes from parent") || strings.Contains(err.Error(), "path escapes"):
		return toolError("%s leads out of the workspace (through a symlink or ..): refused", p)
	}
	return toolError("%s: %v", p, err)
}

func fileURI(runID, rel string) string {
	if runID == "" {
		return ""
	}
	return "runbox://runs/" + runID + "/files/" + (&url.URL{Path: rel}).EscapedPath()
}

func (s *server) putFile(ctx context.Context, _ *mcpsdk.CallToolRequest, in putIn) (*mcpsdk.CallToolResult, putOut, error) {
	rel, err := relPath(in.Path, false)
	if err != nil {
		return nil, putOut{}, err
	}
	var data []byte
	switch in.Encoding {
	case "", "text":
		data = []byte(in.Content)
	case "base64":
		if base64.StdEncoding.DecodedLen(len(in.Content)) > maxPutBytes+3 {
			return nil, putOut{}, toolError("content is over 8 MiB: send it in pieces of at most 8 MiB with append: true (a file may reach 64 MiB)")
		}
		if data, err = base64.StdEncoding.DecodeString(in.Content); err != nil {
			return nil, putOut{}, toolError("content is not valid base64 (%v): encode the file with standard base64, or send text with encoding text", err)
		}
	default:
		return nil, putOut{}, toolError("encoding %q: give text or base64", in.Encoding)
	}
	if len(data) > maxPutBytes {
		return nil, putOut{}, toolError("content is %d bytes, over the 8 MiB a call takes: send it in pieces with append: true (a file may reach 64 MiB)", len(data))
	}
	dir, runID, _, err := s.workspace(ctx, in.PlanID, in.RunID)
	if err != nil {
		return nil, putOut{}, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, putOut{}, toolError("the workspace %s cannot be opened: %v", dir, err)
	}
	defer root.Close()
	if d := path.Dir(rel); d != "." {
		if err := root.MkdirAll(d, 0o755); err != nil {
			return nil, putOut{}, rootError(rel, err)
		}
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if in.Append {
		flags = os.O_WRONLY | os.O_CREATE | os.O_APPEND
		if st, err := root.Stat(rel); err == nil && st.Size()+int64(len(data)) > maxPutFile {
			return nil, putOut{}, toolError("%s would grow to %d bytes, over the 64 MiB limit of a file put through MCP: copy it into the workspace on this machine instead", rel, st.Size()+int64(len(data)))
		}
	}
	f, err := root.OpenFile(rel, flags, 0o644)
	if err != nil {
		return nil, putOut{}, rootError(rel, err)
	}
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		f.Close()
		return nil, putOut{}, toolError("%s is not a regular file: refused", rel)
	}
	n, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, putOut{}, toolError("write %s: %v", rel, err)
	}
	st, _ := root.Stat(rel)
	out := putOut{Workspace: dir, Path: rel, Written: int64(n), URI: fileURI(runID, rel)}
	if st != nil {
		out.Size = st.Size()
	}
	return textResult("wrote %d bytes to %s in %s (now %d bytes)", n, rel, dir, out.Size), out, nil
}

func (s *server) listFiles(ctx context.Context, _ *mcpsdk.CallToolRequest, in listIn) (*mcpsdk.CallToolResult, listOut, error) {
	rel, err := relPath(in.Path, true)
	if err != nil {
		return nil, listOut{}, err
	}
	limit := in.Limit
	switch {
	case limit == 0:
		limit = defaultList
	case limit < 0 || limit > maxList:
		return nil, listOut{}, toolError("limit is %d: give 1 to %d", limit, maxList)
	}
	if in.Offset < 0 {
		return nil, listOut{}, toolError("offset is %d: give 0 or the next_offset of an earlier call", in.Offset)
	}
	dir, runID, ran, err := s.workspace(ctx, in.PlanID, in.RunID)
	if err != nil {
		return nil, listOut{}, err
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, listOut{}, toolError("the workspace %s cannot be opened: %v", dir, err)
	}
	defer root.Close()
	if st, err := root.Stat(rel); err != nil {
		return nil, listOut{}, rootError(rel, err)
	} else if !st.IsDir() {
		return nil, listOut{}, toolError("%s is a file, not a directory: read it with local_read_file", rel)
	}
	out := listOut{Workspace: dir, Files: []fileEntry{}, NextOffset: in.Offset}
	seen, looked := 0, 0
	stop := errors.New("stop")
	err = fs.WalkDir(root.FS(), rel, func(p string, d fs.DirEntry, err error) error {
		looked++
		if looked > maxWalk {
			return stop
		}
		if err != nil || d.IsDir() {
			return nil
		}
		seen++
		if seen <= in.Offset {
			return nil
		}
		if len(out.Files) == limit {
			out.More = true
			return stop
		}
		info, err := d.Info()
		if err != nil {
			return nil
		}
		e := fileEntry{Path: p, Size: info.Size(), Modified: info.ModTime().UTC().Format(time.RFC3339Nano), URI: fileURI(runID, p)}
		e.WrittenByRun = ran.wrote(info.ModTime())
		out.Files = append(out.Files, e)
		return nil
	})
	if err != nil && !errors.Is(err, stop) {
		return nil, listOut{}, toolError("list %s: %v", rel, err)
	}
	out.NextOffset = in.Offset + len(out.Files)
	var b strings.Builder
	fmt.Fprintf(&b, "%d files in %s", len(out.Files), dir)
	if out.More {
		fmt.Fprintf(&b, " (more: offset %d)", out.NextOffset)
	}
	for _, f := range out.Files {
		mark := ""
		if f.WrittenByRun {
			mark = " (written by the run)"
		}
		fmt.Fprintf(&b, "\n%s\t%d bytes%s", f.Path, f.Size, mark)
	}
	return textResult("%s", b.String()), out, nil
}

func (s *server) readFile(ctx context.Context, _ *mcpsdk.CallToolRequest, in readIn) (*mcpsdk.CallToolResult, readOut, error) {
	rel, err := relPath(in.Path, false)
	if err != nil {
		return nil, readOut{}, err
	}
	n := in.MaxBytes
	switch {
	case n == 0:
		n = defaultRead
	case n < 0 || n > maxRead:
		return nil, readOut{}, toolError("max_bytes is %d: give 1 to %d", n, maxRead)
	}
	if in.Offset < 0 {
		return nil, readOut{}, toolError("offset is %d: give 0 or the next_offset of an earlier call", in.Offset)
	}
	dir, runID, _, err := s.workspace(ctx, in.PlanID, in.RunID)
	if err != nil {
		return nil, readOut{}, err
	}
	data, size, err := readChunk(dir, rel, in.Offset, n)
	if err != nil {
		return nil, readOut{}, err
	}
	out := readOut{Path: rel, Size: size, Offset: in.Offset, URI: fileURI(runID, rel)}
	if isText(data) {
		// Leave a character cut at the end for the next call.
		if cut := incompleteTail(data); cut > 0 && in.Offset+int64(len(data)) < size {
			data = data[:len(data)-cut]
		}
		out.Encoding, out.Text = "text", string(data)
	} else {
		out.Encoding, out.Base64 = "base64", base64.StdEncoding.EncodeToString(data)
	}
	out.NextOffset = in.Offset + int64(len(data))
	out.EOF = out.NextOffset >= size
	sum := fmt.Sprintf("%s: bytes %d..%d of %d (%s)", rel, out.Offset, out.NextOffset, size, out.Encoding)
	if !out.EOF {
		sum += fmt.Sprintf("; more from offset %d", out.NextOffset)
	}
	if out.Encoding == "text" {
		sum += ":\n" + out.Text
	}
	return textResult("%s", sum), out, nil
}

// readChunk reads up to n bytes of the workspace file rel from off.
func readChunk(dir, rel string, off int64, n int) ([]byte, int64, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, 0, toolError("the workspace %s cannot be opened: %v", dir, err)
	}
	defer root.Close()
	f, err := root.Open(rel)
	if err != nil {
		return nil, 0, rootError(rel, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, 0, toolError("%s: %v", rel, err)
	}
	if !st.Mode().IsRegular() {
		return nil, 0, toolError("%s is not a regular file (a directory? list it with local_list_files)", rel)
	}
	buf := make([]byte, min(int64(n), max(st.Size()-off, 0)))
	m, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, toolError("read %s: %v", rel, err)
	}
	return buf[:m], st.Size(), nil
}

// isText reports whether b reads as text: valid UTF-8 (a character cut at
// the end aside) without NUL bytes.
func isText(b []byte) bool {
	if strings.IndexByte(string(b), 0) >= 0 {
		return false
	}
	b = b[:len(b)-incompleteTail(b)]
	return utf8.Valid(b)
}

// readResource serves both resource templates: runbox://runs/RUN/log and
// runbox://runs/RUN/files/PATH. RUN is what tools take as run_id (@last,
// @last~N, a run number, a prefix), so the templates use {+run_id}, which
// admits '@' as it is; a file named log is told from the log here.
func (s *server) readResource(ctx context.Context, req *mcpsdk.ReadResourceRequest) (*mcpsdk.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, "runbox://runs/")
	if !ok {
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, noResource, uri)
	}
	if runID, p, ok := strings.Cut(rest, "/files/"); ok && !strings.Contains(runID, "/") {
		return s.readFileResource(ctx, uri, runID, p)
	}
	if runID, ok := strings.CutSuffix(rest, "/log"); ok && !strings.Contains(runID, "/") {
		return s.readLogResource(ctx, uri, runID)
	}
	return nil, resourceError(jsonrpc.CodeInvalidParams, uri, noResource, uri)
}

// noResource says a URI is none of runbox's resources.
const noResource = "no resource %s: runbox's resources are runbox://runs/RUN_ID/log and runbox://runs/RUN_ID/files/PATH"

// resourceError is a JSON-RPC error for resources/read: code is
// jsonrpc.CodeInvalidParams for a run, file or URI that is missing or
// refused, CodeInternalError when the daemon failed.
func resourceError(code int64, uri, format string, a ...any) error {
	data, _ := json.Marshal(map[string]string{"uri": uri})
	return &jsonrpc.Error{Code: code, Message: fmt.Sprintf(format, a...), Data: data}
}

// resourceRun resolves a resource URI's run id as the tools do.
func (s *server) resourceRun(ctx context.Context, uri, runID string) (*api.Run, error) {
	if u, err := url.PathUnescape(runID); err == nil {
		runID = u
	}
	if runID == "" {
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "%s names no run: give runbox://runs/RUN_ID/..., RUN_ID as local_execute returned it (or @last)", uri)
	}
	r, err := s.c.Get(ctx, runID)
	var ce *client.Error
	switch {
	case err == nil:
		return r, nil
	case errors.As(err, &ce) && ce.Code == "not_found":
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "no run %s: use a run_id returned by local_execute, or @last (%s)", quoteID(runID), ce.Msg)
	case errors.As(err, &ce) && (ce.Code == "ambiguous" || ce.Code == "bad_request"):
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "run id %s: %s; give more characters of it", quoteID(runID), ce.Msg)
	}
	return nil, resourceError(jsonrpc.CodeInternalError, uri, "%v", daemonError(err, "run", runID))
}

func (s *server) readFileResource(ctx context.Context, uri, runID, p string) (*mcpsdk.ReadResourceResult, error) {
	if u, err := url.PathUnescape(p); err == nil {
		p = u
	}
	rel, err := relPath(p, false)
	if err != nil {
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "%v", err)
	}
	r, err := s.resourceRun(ctx, uri, runID)
	if err != nil {
		return nil, err
	}
	data, size, err := readChunk(r.Spec.Workdir, rel, 0, maxResourceLen)
	if err != nil {
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "%v", err)
	}
	if size > maxResourceLen {
		return nil, resourceError(jsonrpc.CodeInvalidParams, uri, "%s is %d bytes, over the 1 MiB a resource carries: page it with local_read_file", rel, size)
	}
	c := &mcpsdk.ResourceContents{URI: uri}
	if isText(data) {
		c.MIMEType, c.Text = "text/plain; charset=utf-8", string(data)
	} else {
		c.MIMEType, c.Blob = "application/octet-stream", data
	}
	return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{c}}, nil
}

// readLogResource is the run's output, its last 1 MiB; a log cut to that
// starts at a line boundary, after a first line that says it was cut.
func (s *server) readLogResource(ctx context.Context, uri, runID string) (*mcpsdk.ReadResourceResult, error) {
	r, err := s.resourceRun(ctx, uri, runID)
	if err != nil {
		return nil, err
	}
	w := window{max: maxResourceLen}
	err = s.c.Logs(ctx, r.ID, url.Values{"stream": outputStreams}, func(f client.Frame) error { w.add(f.Data); return nil })
	if err != nil && !client.IsNotFound(err) {
		return nil, resourceError(jsonrpc.CodeInternalError, uri, "%v", daemonError(err, "run", runID))
	}
	text, off, _, _ := w.result(0)
	if off > 0 {
		if i := strings.IndexByte(text, '\n'); i >= 0 && i+1 < len(text) {
			text, off = text[i+1:], off+int64(i+1)
		}
		text = fmt.Sprintf("[runbox: the log of run %s is %d bytes; this is its end, from byte %d; read what comes before with local_logs (run_id %q, since_offset 0)]\n", r.ID, w.total, off, r.ID) + text
	}
	return &mcpsdk.ReadResourceResult{Contents: []*mcpsdk.ResourceContents{{URI: uri, MIMEType: "text/plain; charset=utf-8", Text: text}}}, nil
}

// quoteID quotes an id for a message, cut when it is long.
func quoteID(id string) string {
	kept, more := cutWord(id)
	return fmt.Sprintf("%q", kept) + more
}
