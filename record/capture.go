package record

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Input is what a record is taken from.
type Input struct {
	Command []string
	Shell   bool
	Workdir string
	Sandbox string
	Isolate string
	Limits  Limits
	// Env are the run's explicit variables, KEY=VALUE, secret values
	// already redacted by the caller; EnvNames the names it inherited.
	Env      []string
	EnvNames []string
	// RunEnv is the run's whole environment, read to find its interpreter
	// (PATH, PYTHONPATH, VIRTUAL_ENV, ...); never kept in the record.
	RunEnv []string
	Image  string
	// Started is when the run started (zero: not known): the workspace
	// files changed after it are named in Code.ChangedAfterStart.
	Started time.Time
	// InspectImage, when set, gives a container image's id and digest.
	InspectImage func(ctx context.Context, name string) (id, digest string, err error)
}

// inlineHash bounds the script bytes hashed on the submit path; a larger
// script is hashed after the start.
const inlineHash = 256 << 10

// Fast takes the parts of a record that cost nothing to speak of: no
// process is spawned, a few small files are read.
func Fast(in Input, now time.Time) *Record {
	r := &Record{
		Version: Version, TakenAt: now.UTC(),
		Command: in.Command, Params: Params(in.Command), Workdir: in.Workdir,
		Sandbox: in.Sandbox, Isolate: in.Isolate, Limits: in.Limits,
		Env: in.Env, EnvNames: sortedCopy(in.EnvNames),
	}
	code, note := readGit(in.Workdir)
	r.Code = code
	r.note(note)
	if !in.Shell {
		if _, script := interpreterOf(in.Command); script != "" {
			r.Script = hashScript(in.Workdir, script, inlineHash)
		}
	}
	if in.Image != "" {
		r.Image = &Image{Name: in.Image}
	}
	return r
}

func (r *Record) note(n string) {
	if n != "" {
		r.Notes = append(r.Notes, n)
	}
}

// hashScript hashes the script when it is a file of at most limit bytes;
// a larger one gets its size only (Complete hashes it).
func hashScript(workdir, script string, limit int64) *Script {
	p := script
	if !filepath.IsAbs(p) {
		p = filepath.Join(workdir, p)
	}
	st, err := os.Stat(p)
	if err != nil || !st.Mode().IsRegular() {
		return nil // a program on PATH, not a script of the workspace
	}
	s := &Script{Path: script, Size: st.Size()}
	if st.Size() > limit {
		return s
	}
	f, err := os.Open(p)
	if err != nil {
		s.Note = err.Error()
		return s
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(f, MaxScriptHash))
	if err != nil {
		s.Note = err.Error()
		return s
	}
	s.SHA256 = hex.EncodeToString(h.Sum(nil))
	if n == MaxScriptHash && st.Size() > MaxScriptHash {
		s.Note = fmt.Sprintf("only the first %d MiB are hashed", MaxScriptHash>>20)
	}
	return s
}

// Complete adds the slow parts (after the run has started): the git diff
// and untracked names, a large script's hash, the interpreter and its
// packages, the image's id and digest, the host.
func (c *Cache) Complete(ctx context.Context, r *Record, in Input) {
	c.CompleteAt(ctx, r, in, time.Now())
}

// CompleteAt is Complete reusing a reading of the same workspace's git
// state (same root and commit) taken at or after fresh.
func (c *Cache) CompleteAt(ctx context.Context, r *Record, in Input, fresh time.Time) {
	if r.Code != nil && r.Code.Root != "" && !r.Code.AtSnapshot {
		for _, n := range c.git(ctx, r.Code, fresh) {
			r.note(n)
		}
		r.Code.ChangedAfterStart = changedAfter(r.Code, in.Started)
	}
	if r.Script != nil && r.Script.SHA256 == "" && r.Script.Note == "" {
		r.Script = hashScript(in.Workdir, r.Script.Path, MaxScriptHash)
	}
	env := envMap(in.RunEnv)
	if interp, _ := interpreterOf(in.Command); interp != "" && !in.Shell {
		if in.Sandbox == "docker" {
			r.Interpreter = &Interpreter{Kind: "python", Path: interp,
				Note: "the interpreter runs inside the container: its packages are those of the image (see image)"}
		} else {
			c.completePython(ctx, r, interp, in.Workdir, env)
		}
	}
	if r.Image != nil && in.InspectImage != nil {
		id, digest, err := in.InspectImage(ctx, r.Image.Name)
		if err != nil {
			r.Image.Note = err.Error()
		}
		r.Image.ID, r.Image.Digest = id, digest
	}
	r.Host = HostFacts(ctx)
	r.Complete = true
}

func envMap(env []string) map[string]string {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	return m
}

func sortedCopy(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}

// Params reads a command's parameters: --name value, --name=value,
// name=value; a flag followed by another flag (or nothing) is "true".
// The interpreter and its script are not parameters.
func Params(cmd []string) map[string]string {
	if len(cmd) == 0 {
		return nil
	}
	args := cmd[1:]
	if interp, script := interpreterOf(cmd); interp != "" && script != "" {
		for i, a := range args {
			if a == script {
				args = args[i+1:]
				break
			}
		}
	}
	out := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		if name, ok := strings.CutPrefix(a, "--"); ok && name != "" {
			if k, v, ok := strings.Cut(name, "="); ok {
				out[k] = v
				continue
			}
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") && !isAssignment(args[i+1]) {
				out[name] = args[i+1]
				i++
				continue
			}
			out[name] = "true"
			continue
		}
		if isAssignment(a) {
			k, v, _ := strings.Cut(a, "=")
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// isAssignment: name=value with a plain name (not a path, not a flag).
func isAssignment(a string) bool {
	k, v, ok := strings.Cut(a, "=")
	return ok && k != "" && !strings.ContainsAny(k, "/ -;$\"'") && !strings.ContainsAny(v, " \t\n;")
}

// changedAfter lists the tracked files with uncommitted changes whose
// content changed after t (their modification time), none when t is
// unknown. Untracked files are left out: most a run makes itself.
func changedAfter(code *Code, t time.Time) []string {
	if t.IsZero() {
		return nil
	}
	var out []string
	for _, f := range code.DiffFiles {
		if st, err := os.Stat(filepath.Join(code.Root, f)); err == nil && st.ModTime().After(t) {
			out = append(out, f)
		}
	}
	return out
}
