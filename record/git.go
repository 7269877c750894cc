package record

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// gitDirs are the directories of a work tree's repository: its own git
// dir (HEAD) and the common one (refs, config) — the same but for a
// linked worktree.
type gitDirs struct {
	root, git, common string
}

// findGit looks for the repository holding dir, reading files only.
func findGit(dir string) (gitDirs, bool) {
	for d := dir; ; {
		p := filepath.Join(d, ".git")
		if st, err := os.Stat(p); err == nil {
			g := gitDirs{root: d, git: p, common: p}
			if !st.IsDir() {
				b, err := os.ReadFile(p)
				if err != nil {
					return gitDirs{}, false
				}
				gd, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
				if !ok {
					return gitDirs{}, false
				}
				if !filepath.IsAbs(gd) {
					gd = filepath.Join(d, gd)
				}
				g.git, g.common = gd, gd
			}
			if b, err := os.ReadFile(filepath.Join(g.git, "commondir")); err == nil {
				c := strings.TrimSpace(string(b))
				if !filepath.IsAbs(c) {
					c = filepath.Join(g.git, c)
				}
				g.common = filepath.Clean(c)
			}
			return g, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return gitDirs{}, false
		}
		d = parent
	}
}

// readGit is the fast part: commit, branch and remote from the files under
// .git, no git process (a spawn costs milliseconds on the submit path).
func readGit(dir string) (*Code, string) {
	g, ok := findGit(dir)
	if !ok {
		return nil, "the workspace is not in a git repository: the record has no code part"
	}
	c := &Code{Root: g.root}
	head, err := os.ReadFile(filepath.Join(g.git, "HEAD"))
	if err != nil {
		return c, "git HEAD unreadable: " + err.Error()
	}
	h := strings.TrimSpace(string(head))
	if ref, ok := strings.CutPrefix(h, "ref: "); ok {
		c.Branch = strings.TrimPrefix(ref, "refs/heads/")
		c.Commit = resolveRef(g, ref)
	} else {
		c.Commit = h // detached
	}
	c.Remote = remoteURL(filepath.Join(g.common, "config"))
	return c, ""
}

func resolveRef(g gitDirs, ref string) string {
	for _, d := range []string{g.git, g.common} {
		if b, err := os.ReadFile(filepath.Join(d, ref)); err == nil {
			return strings.TrimSpace(string(b))
		}
	}
	f, err := os.Open(filepath.Join(g.common, "packed-refs"))
	if err != nil {
		return "" // an unborn branch: no commit yet
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if sha, name, ok := strings.Cut(sc.Text(), " "); ok && name == ref {
			return sha
		}
	}
	return ""
}

// remoteURL reads origin's url (else the first remote's) from a git config.
func remoteURL(config string) string {
	b, err := os.ReadFile(config)
	if err != nil {
		return ""
	}
	var section, first, origin string
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = line
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || strings.TrimSpace(k) != "url" || !strings.HasPrefix(section, `[remote "`) {
			continue
		}
		v = strings.TrimSpace(v)
		if first == "" {
			first = v
		}
		if section == `[remote "origin"]` {
			origin = v
		}
	}
	if origin == "" {
		origin = first
	}
	return StripCredentials(origin)
}

// StripCredentials takes a user's password or token out of a remote URL
// (https://user:token@host/x → https://host/x); scp-like remotes
// (git@host:x) carry none and stay.
func StripCredentials(remote string) string {
	u, err := url.Parse(remote)
	if err != nil || u.Scheme == "" || u.User == nil {
		return remote
	}
	u.User = nil
	return u.String()
}

// diffCountLimit: past this many bytes a dirty diff is not even counted
// (a 2 GiB diff is neither kept nor read to its end). A variable, with
// maxDiff, so tests can provoke both bounds without writing gigabytes.
var (
	diffCountLimit int64 = 256 << 20
	maxDiff        int64 = MaxDiff
)

// completeGit adds the slow part: the files changed and untracked (one
// `git status`), and, when tracked files changed, the uncommitted diff
// (bounded). A clean workspace costs one git process.
func completeGit(ctx context.Context, c *Code) []string {
	var notes []string
	out, _, more, err := boundedOutput(ctx, c.Root, 4<<20, 4<<20, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames")
	if err != nil {
		return append(notes, "git status: "+err.Error())
	}
	var untracked []string
	for _, e := range strings.Split(out, "\x00") {
		if len(e) < 4 {
			continue
		}
		if e[:2] == "??" {
			untracked = append(untracked, e[3:])
		} else {
			c.DiffFiles = append(c.DiffFiles, e[3:])
		}
	}
	if more {
		notes = append(notes, "git status listed over 4 MiB of names: the list of changed and untracked files is cut")
	}
	if len(untracked) > MaxUntracked {
		c.UntrackedMore = len(untracked) - MaxUntracked
		untracked = untracked[:MaxUntracked]
	}
	c.Untracked = untracked
	c.Dirty = len(c.DiffFiles) > 0 || len(untracked) > 0
	if len(c.DiffFiles) == 0 || c.Commit == "" {
		return notes
	}
	diff, total, more, err := boundedOutput(ctx, c.Root, maxDiff, diffCountLimit,
		"diff", "HEAD", "--no-color", "--no-ext-diff")
	if err != nil {
		return append(notes, "git diff: "+err.Error())
	}
	c.Diff, c.DiffBytes = diff, total
	switch {
	case more:
		c.DiffCut = fmt.Sprintf("the uncommitted diff is over %d MiB; kept its first %d KiB", diffCountLimit>>20, maxDiff>>10)
	case total > maxDiff:
		c.DiffCut = fmt.Sprintf("the uncommitted diff is %d bytes; kept its first %d KiB", total, maxDiff>>10)
	}
	return notes
}

func nonEmptyLines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if l != "" {
			out = append(out, l)
		}
	}
	return out
}

// boundedOutput runs git in dir and keeps the first keep bytes of its
// output, counting up to count bytes (more reports there were more: git is
// stopped then, a 2 GiB diff is not read to its end).
func boundedOutput(ctx context.Context, dir string, keep, count int64, args ...string) (string, int64, bool, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir, "-c", "core.quotepath=off"}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return "", 0, false, err
	}
	if err := cmd.Start(); err != nil {
		return "", 0, false, err
	}
	lower(cmd.Process.Pid)
	var buf bytes.Buffer
	n, _ := io.Copy(&buf, io.LimitReader(pipe, keep))
	rest, _ := io.Copy(io.Discard, io.LimitReader(pipe, count-n))
	more := n+rest >= count
	if more {
		cancel()
	}
	err = cmd.Wait()
	if err != nil && !more {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", 0, false, fmt.Errorf("%s", firstLine(msg))
	}
	return buf.String(), n + rest, more, nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// CommitFiles lists the files that differ between two commits of the
// repository at root (for a diff of two runs on different commits).
func CommitFiles(ctx context.Context, root, a, b string) ([]string, error) {
	out, _, _, err := boundedOutput(ctx, root, 64<<10, 64<<10, "diff", "--name-only", a, b, "--")
	if err != nil {
		return nil, err
	}
	return nonEmptyLines(out), nil
}

// ExplainCommits fills the detail of a commit change with the files that
// differ between the two commits, when the repository is still there.
func ExplainCommits(ctx context.Context, a, b *Record, cs []Change) {
	if a == nil || b == nil || a.Code == nil || b.Code == nil || a.Code.Root != b.Code.Root {
		return
	}
	for i, c := range cs {
		if c.Kind != "code" || c.Name != "commit" {
			continue
		}
		files, err := CommitFiles(ctx, a.Code.Root, a.Code.Commit, b.Code.Commit)
		switch {
		case err != nil:
			cs[i].Detail = "the commits cannot be compared here: " + err.Error()
		case len(files) > 10:
			cs[i].Detail = fmt.Sprintf("%d files differ: %s, ...", len(files), strings.Join(files[:10], ", "))
		default:
			cs[i].Detail = fmt.Sprintf("%d file(s) differ: %s", len(files), strings.Join(files, ", "))
		}
	}
}
