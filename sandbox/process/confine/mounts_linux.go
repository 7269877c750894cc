package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// privateMounts gives the calling thread's new mount namespace (made by
// the caller: unshare, or the confine entry's clone flags) what a
// confined run sees instead of the host's shared places. Deny by default:
// every directory where sockets and shared scratch live (Scratch, the
// runtime dirs in p.Cover) gets an empty tmpfs of the run's own, and the
// secrets and runbox's home (p.Hide) an empty one too. What the run must
// still reach there — its workspace, temp dir, --rw and read-only paths,
// the command itself, the resolver's configuration — is bound back at the
// same path. Nothing is listed as forbidden: a socket nobody thought of
// (the next agent, engine or bus) is gone with the directory it lives in.
// The namespace's mounts are made private first, or the mounts would
// propagate back to the host's.
func privateMounts(p Policy, cmdPath string) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	covers := coverDirs(p)
	keepList := keepPaths(p, cmdPath)
	// A hidden directory is covered after what is bound back, so that one
	// inside a bound path (a home below the workspace) is hidden too;
	// one that holds a bound path (a workspace in it, asked for) first.
	var hideAfter []string
	for _, h := range p.Hide {
		if st, err := os.Lstat(h); err != nil || !st.IsDir() || filepath.Clean(h) == "/" {
			continue
		}
		if slices.ContainsFunc(keepList, func(k string) bool { return within(k, resolve(h)) }) {
			covers = append(covers, cover{filepath.Clean(h), "755"})
		} else {
			hideAfter = append(hideAfter, h)
		}
	}
	// What is bound back is opened before it is covered.
	var keep []kept
	defer func() {
		for _, k := range keep {
			unix.Close(k.fd)
		}
	}()
	for _, path := range keepList {
		if !underAny(path, covers) {
			continue
		}
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // not there: nothing to bind back
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			continue
		}
		keep = append(keep, kept{path, fd, st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	for _, c := range covers {
		if err := unix.Mount("tmpfs", c.path, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode="+c.mode); err != nil {
			return fmt.Errorf("private %s: %w", c.path, err)
		}
	}
	if p.RuntimeDir != "" {
		if err := os.MkdirAll(p.RuntimeDir, 0o700); err != nil {
			return fmt.Errorf("private runtime dir: %w", err)
		}
		if os.Geteuid() == 0 && p.UID != 0 {
			_ = os.Chown(p.RuntimeDir, p.UID, p.GID)
		}
	}
	for _, k := range keep {
		if err := bindBack(k); err != nil {
			return err
		}
	}
	for _, h := range hideAfter {
		if st, err := os.Lstat(h); err != nil || !st.IsDir() {
			continue // gone with what covers it
		}
		if err := unix.Mount("tmpfs", h, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_RDONLY, "mode=755"); err != nil {
			return fmt.Errorf("hide %s: %w", h, err)
		}
	}
	// Sockets elsewhere, and hidden files: /dev/null over each.
	for _, m := range append(p.Mask, p.Hide...) {
		if st, err := os.Lstat(m); err != nil || st.IsDir() {
			continue // a dir covered above, or gone with what covers it
		}
		if err := unix.Mount("/dev/null", m, "", unix.MS_BIND, ""); err != nil && !errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("mask %s: %w", m, err)
		}
	}
	return nil
}

type cover struct{ path, mode string }

type kept struct {
	path string
	fd   int
	dir  bool
}

// coverDirs is what gets an empty tmpfs, parents first: Scratch and the
// runtime dirs, each only if it is a directory here (not a symlink:
// /var/run is /run).
func coverDirs(p Policy) []cover {
	var out []cover
	seen := map[string]bool{}
	add := func(mode string, paths ...string) {
		for _, x := range paths {
			if x == "" || !filepath.IsAbs(x) {
				continue
			}
			x = filepath.Clean(x)
			st, err := os.Lstat(x)
			if x == "/" || seen[x] || err != nil || !st.IsDir() {
				continue
			}
			seen[x] = true
			out = append(out, cover{x, mode})
		}
	}
	for _, s := range Scratch {
		mode := "1777"
		if s == "/run" || s == "/var/run" {
			mode = "755"
		}
		add(mode, s)
	}
	add("700", p.Cover...)
	// Parents first, and nothing below a dir already covered.
	slices.SortStableFunc(out, func(a, b cover) int { return len(a.path) - len(b.path) })
	var kept []cover
	for _, c := range out {
		var parent []cover
		for _, k := range kept {
			if within(c.path, k.path) {
				parent = append(parent, k)
			}
		}
		if len(parent) > 0 {
			continue // already empty: its parent's tmpfs has no such dir
		}
		kept = append(kept, c)
	}
	return kept
}

// keepPaths are what the run needs under a covered dir, outermost first;
// a path inside another is visible through it.
func keepPaths(p Policy, cmdPath string) []string {
	var in []string
	for _, x := range append(append(append([]string{p.Workdir, p.TempDir, cmdPath}, p.RW...), p.RO...), resolverPaths()...) {
		if x == "" || !filepath.IsAbs(x) {
			continue
		}
		in = append(in, resolve(x))
	}
	slices.SortStableFunc(in, func(a, b string) int { return len(a) - len(b) })
	var out []string
	for _, x := range in {
		if !slices.ContainsFunc(out, func(o string) bool { return within(x, o) }) {
			out = append(out, x)
		}
	}
	return out
}

// resolverPaths are what name resolution reads under /run: systemd-
// resolved's directory, and wherever /etc/resolv.conf points (resolvconf,
// NetworkManager).
func resolverPaths() []string {
	out := []string{"/run/systemd/resolve"}
	if r, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && r != "/etc/resolv.conf" {
		out = append(out, r)
	}
	return out
}

func underAny(path string, covers []cover) bool {
	path = resolve(path)
	for _, c := range covers {
		if within(path, c.path) {
			return true
		}
	}
	return false
}

// bindBack binds k back at its own path in the tmpfs that now covers it
// (recursively: a user namespace may not bind part of a mount tree).
func bindBack(k kept) error {
	if k.dir {
		if err := os.MkdirAll(k.path, 0o755); err != nil {
			return fmt.Errorf("bind back %s: %w", k.path, err)
		}
	} else {
		if err := os.MkdirAll(filepath.Dir(k.path), 0o755); err != nil {
			return fmt.Errorf("bind back %s: %w", k.path, err)
		}
		f, err := os.OpenFile(k.path, os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("bind back %s: %w", k.path, err)
		}
		f.Close()
	}
	src := "/proc/self/fd/" + strconv.Itoa(k.fd)
	if err := unix.Mount(src, k.path, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return fmt.Errorf("bind back %s: %w", k.path, err)
	}
	return nil
}

// isCovered reports whether path lies in a place a confined run gets
// privately (Scratch), where a mask is unnecessary.
func isCovered(path string) bool {
	for _, s := range Scratch {
		if st, err := os.Lstat(s); err == nil && st.IsDir() && within(path, s) {
			return true
		}
	}
	return strings.HasPrefix(path, "/run/user/")
}
