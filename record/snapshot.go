package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// Bounds of a snapshot: files over MaxSnapshotFile, and whatever would
// take the copy over MaxSnapshotBytes or MaxSnapshotFiles, are left in
// place and linked in.
const (
	MaxSnapshotFile  = 16 << 20
	MaxSnapshotBytes = 512 << 20
	MaxSnapshotFiles = 5000
	maxLeftNames     = 50
)

// budget is what one snapshot copies at most (tests lower it).
var budget = struct {
	files int
	bytes int64
}{MaxSnapshotFiles, MaxSnapshotBytes}

// TakeSnapshot copies the workspace's code into dest, so that edits made
// while the run waits do not change what runs: in a git repository the
// tracked files as they are now (modified ones included) and the untracked
// ones git does not ignore; elsewhere every file but those of Python and
// conda environments, node_modules and tools' caches, the files nearer the
// top of the workspace first (code, rather than the data deep under it,
// when the budget runs out). Ignored paths, large files, what is over the budget
// and runbox's own home (home, when the workspace holds it) are left in
// place, linked from the copy at the highest directory that has nothing
// copied (so data directories are still found, with one link each), and
// named in Left.
func TakeSnapshot(ctx context.Context, workdir, dest, home string) (*Snapshot, error) {
	own := "" // runbox's home, relative to the workspace that holds it
	if r, err := filepath.Rel(workdir, home); home != "" && err == nil && r != "." && filepath.IsLocal(r) {
		own = r
	}
	files, gitErr := gitFiles(ctx, workdir)
	var envs []string
	if gitErr != nil {
		var err error
		if files, envs, err = walkFiles(workdir, own); err != nil {
			return nil, fmt.Errorf("snapshot: list %s: %w", workdir, err)
		}
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	s := &Snapshot{Dir: dest}
	var gitNotes []string
	if gitErr == nil {
		// What the copy holds, read with it: read once the run had
		// started, from the workspace, it described later edits the copy
		// never saw (a sweep's members, edited under them).
		if code, note := readGit(workdir); code != nil {
			gitNotes = completeGit(ctx, code)
			if note != "" {
				gitNotes = append(gitNotes, note)
			}
			code.AtSnapshot = true
			s.Code = code
		}
	}
	stamps := map[string]stamp{}
	var left []string
	named := map[string]bool{} // each path left and its directories
	leave := func(rel, why string) {
		left = append(left, rel+" ("+why+")")
		for d := rel; d != "." && !named[d]; d = filepath.Dir(d) {
			named[d] = true
		}
	}
	for _, env := range envs {
		leave(env, "an environment or cache")
	}
	if own != "" {
		leave(own, "runbox's own state")
	}
	slices.SortStableFunc(files, func(a, b string) int {
		return strings.Count(a, string(filepath.Separator)) - strings.Count(b, string(filepath.Separator))
	})
	for _, rel := range files {
		if own != "" && (rel == own || strings.HasPrefix(rel, own+string(filepath.Separator))) {
			continue // git listed it
		}
		src := filepath.Join(workdir, rel)
		st, err := os.Lstat(src)
		if err != nil {
			continue // tracked but deleted: it is not there to run
		}
		link := st.Mode()&fs.ModeSymlink != 0
		switch {
		case link: // a link is copied as a link, outside the budget
		case !st.Mode().IsRegular():
			continue
		case st.Size() > MaxSnapshotFile:
			leave(rel, "large")
			continue
		case s.Bytes+st.Size() > budget.bytes || s.Files >= budget.files:
			leave(rel, "over the snapshot's budget")
			continue
		}
		dst := filepath.Join(dest, rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return nil, fmt.Errorf("snapshot: %w", err)
		}
		if link {
			if t, err := os.Readlink(src); err == nil {
				_ = os.Symlink(t, dst)
			}
			continue
		}
		if err := copyKeepingTime(src, dst, st); err != nil {
			return nil, fmt.Errorf("snapshot: copy %s: %w", rel, err)
		}
		stamps[filepath.ToSlash(rel)] = stampOf(st)
		s.Files++
		s.Bytes += st.Size()
	}
	// What git ignores (data, checkpoints, venvs) and what was left above
	// is linked: each workspace entry missing from the copy, in every
	// directory the copy has.
	if err := linkLeftovers(workdir, dest, ".", named, &left); err != nil {
		return nil, err
	}
	if len(left) > maxLeftNames {
		s.Note = fmt.Sprintf("%d more paths left in place; ", len(left)-maxLeftNames)
		left = left[:maxLeftNames]
	}
	s.Left = left
	s.Note += "the run executes this copy: files it creates or changes in the copy are copied back into the workspace when it ends, unless the workspace's file was changed meanwhile (paths left in place are links to the workspace)"
	if err := writeStamps(workdir, dest, stamps); err != nil {
		return nil, err
	}
	if gitErr != nil {
		s.Note += "; not a git repository: every file was copied, within the budget (" + gitErr.Error() + ")"
	}
	for _, n := range gitNotes {
		s.Note += "; " + n
	}
	return s, nil
}

// linkLeftovers links into dest each entry of workdir/rel that dest lacks,
// descending into the directories dest has, and adds those it links to
// left, but for the paths named (already there, with their reason).
func linkLeftovers(workdir, dest, rel string, named map[string]bool, left *[]string) error {
	ents, err := os.ReadDir(filepath.Join(workdir, rel))
	if err != nil {
		return nil
	}
	for _, e := range ents {
		r := filepath.Join(rel, e.Name())
		if e.Name() == ".git" {
			continue
		}
		d := filepath.Join(dest, r)
		st, err := os.Lstat(d)
		switch {
		case err != nil:
			if err := os.Symlink(filepath.Join(workdir, r), d); err != nil {
				return fmt.Errorf("snapshot: link %s: %w", r, err)
			}
			if !named[r] {
				*left = append(*left, r+" (ignored or not code)")
			}
		case st.IsDir():
			if err := linkLeftovers(workdir, dest, r, named, left); err != nil {
				return err
			}
		}
	}
	return nil
}

// gitFiles lists the tracked and the not-ignored untracked files under dir.
func gitFiles(ctx context.Context, dir string) ([]string, error) {
	if _, ok := findGit(dir); !ok {
		return nil, fmt.Errorf("no .git found")
	}
	cmd := exec.CommandContext(ctx, "git", "-C", dir, "ls-files", "-z", "--cached", "--others", "--exclude-standard")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %v %s", err, strings.TrimSpace(stderr.String()))
	}
	var files []string
	seen := map[string]bool{}
	for _, f := range strings.Split(string(out), "\x00") {
		if f != "" && !seen[f] {
			seen[f] = true
			files = append(files, filepath.FromSlash(f))
		}
	}
	return files, nil
}

// walkFiles lists every file under dir but those under .git, under skip
// (runbox's home: not walked at all) and under the environments and
// caches it finds (envs, returned apart): outside git, what a .gitignore
// holds by habit is left in place all the same.
func walkFiles(dir, skip string) (files, envs []string, err error) {
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case !d.IsDir():
			files = append(files, rel)
		case d.Name() == ".git" || (skip != "" && rel == skip):
			return filepath.SkipDir
		case rel != "." && envOrCache(p, d.Name()):
			envs = append(envs, rel)
			return filepath.SkipDir
		}
		return nil
	})
	return files, envs, err
}

// envOrCache says whether directory p is a Python virtualenv (it holds
// pyvenv.cfg), a conda environment (conda-meta), node_modules, or a
// tool's cache: thousands of files no one edits while a run waits.
func envOrCache(p, name string) bool {
	switch name {
	case "node_modules", "__pycache__", ".ipynb_checkpoints", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox":
		return true
	}
	for _, marker := range []string{"pyvenv.cfg", "conda-meta"} {
		if _, err := os.Lstat(filepath.Join(p, marker)); err == nil {
			return true
		}
	}
	return false
}

// copyKeepingTime copies src, whose info is st, to dst with its mode and
// time: the time lets a run's end tell what the run changed in its copy,
// and what the user changed in the workspace.
func copyKeepingTime(src, dst string, st fs.FileInfo) error {
	if err := copyFile(src, dst, st.Mode().Perm()); err != nil {
		return err
	}
	return os.Chtimes(dst, st.ModTime(), st.ModTime())
}

func copyFile(src, dst string, perm fs.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// CopySnapshot makes dest a copy of snapshot src (one TakeSnapshot made):
// its files with their modes and times, its links as they are (paths left
// in place still point into the workspace), then its stamps, last, so that
// a dest with stamps is whole. A sweep takes one snapshot and each member
// copies it as it starts: the copy a run changes is its own, and the
// stamps say what it looked like at the sweep's submission.
func CopySnapshot(src, dest string) error {
	stamps, err := os.ReadFile(StampsPath(src))
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.MkdirAll(dest, 0o700); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil || rel == "." {
			return err
		}
		dst := filepath.Join(dest, rel)
		st, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, st.Mode().Perm()|0o700)
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			return os.Symlink(t, dst)
		case !d.Type().IsRegular():
			return nil
		}
		return copyKeepingTime(p, dst, st)
	})
	if err != nil {
		return fmt.Errorf("snapshot: copy %s: %w", src, err)
	}
	if err := os.WriteFile(StampsPath(dest), stamps, 0o600); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}
