package record

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"
)

// pythonName matches the names of Python interpreters.
var pythonName = lazyRegexp(`^python(\d+(\.\d+)?)?$`)

// interpreterOf names the interpreter of cmd and the script it runs, if
// any ("python3 -u train.py" → python3, train.py).
func interpreterOf(cmd []string) (interp, script string) {
	if len(cmd) == 0 {
		return "", ""
	}
	if !pythonName().MatchString(filepath.Base(cmd[0])) {
		return "", cmd[0]
	}
	for i := 1; i < len(cmd); i++ {
		a := cmd[i]
		switch {
		case a == "-m" || a == "-c":
			return cmd[0], ""
		case a == "-X" || a == "-W":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return cmd[0], a
		}
	}
	return cmd[0], ""
}

// lookPath finds prog as the run would: relative to its workdir when it
// has a slash, else on the run's PATH.
func lookPath(prog, workdir string, env map[string]string) (string, error) {
	if strings.Contains(prog, "/") {
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(workdir, prog)
		}
		if _, err := os.Stat(prog); err != nil {
			return "", err
		}
		return prog, nil
	}
	path, ok := env["PATH"]
	if !ok {
		path = os.Getenv("PATH")
	}
	for _, d := range filepath.SplitList(path) {
		if d == "" {
			d = "."
		}
		p := filepath.Join(d, prog)
		if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s: not found on the run's PATH", prog)
}

// probeScript asks the interpreter where it imports from.
const probeScript = `import sys, json; print(json.dumps({"version": sys.version.split()[0], "executable": sys.executable, "path": sys.path, "prefix": sys.prefix}))`

type probe struct {
	Version    string   `json:"version"`
	Executable string   `json:"executable"`
	Path       []string `json:"path"`
	Prefix     string   `json:"prefix"`
}

// Cache keeps interpreter probes and site-packages listings: the probe is
// keyed by the interpreter file and the environment that steers it, a
// listing by its directory and mtime (installing or removing a
// distribution adds or removes an entry, which changes the mtime).
type Cache struct {
	mu     sync.Mutex
	probes map[string]probeEntry
	dirs   map[string]dirEntry
	gits   map[string]gitReading
}

// gitReading is the slow git part of a workspace, as read at a time.
type gitReading struct {
	at    time.Time
	code  Code
	notes []string
}

// git fills c's slow part, from a reading of its root and commit taken at
// or after fresh when there is one.
func (c *Cache) git(ctx context.Context, code *Code, fresh time.Time) []string {
	key := code.Root + "\x00" + code.Commit
	c.mu.Lock()
	g, ok := c.gits[key]
	c.mu.Unlock()
	if ok && !g.at.Before(fresh) {
		fast := *code
		*code = g.code
		code.Branch, code.Remote = fast.Branch, fast.Remote
		return g.notes
	}
	at := time.Now()
	notes := completeGit(ctx, code)
	c.mu.Lock()
	if len(c.gits) > 64 {
		clear(c.gits) // a bound, not an LRU: readings are reused only within a batch
	}
	c.gits[key] = gitReading{at: at, code: *code, notes: notes}
	c.mu.Unlock()
	return notes
}

type probeEntry struct {
	p   *probe
	err error
}

type dirEntry struct {
	mtime time.Time
	pkgs  map[string]string
}

// NewCache returns an empty cache.
func NewCache() *Cache {
	return &Cache{probes: map[string]probeEntry{}, dirs: map[string]dirEntry{}, gits: map[string]gitReading{}}
}

// steering are the variables that change what an interpreter imports.
var steering = []string{"PATH", "PYTHONPATH", "PYTHONHOME", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_VERSION", "HOME"}

func (c *Cache) probe(ctx context.Context, path, workdir string, env map[string]string) (*probe, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	key := path + "\x00" + st.ModTime().String() + "\x00" + workdir
	var penv []string
	for _, k := range steering {
		if v, ok := env[k]; ok {
			key += "\x00" + k + "=" + v
			penv = append(penv, k+"="+v)
		}
	}
	c.mu.Lock()
	e, ok := c.probes[key]
	c.mu.Unlock()
	if ok {
		return e.p, e.err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "-c", probeScript)
	cmd.Dir, cmd.Env = workdir, penv
	out, err := cmd.Output()
	var p probe
	if err == nil {
		err = json.Unmarshal(out, &p)
	}
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok && len(ee.Stderr) > 0 {
			err = fmt.Errorf("%s", firstLine(strings.TrimSpace(string(ee.Stderr))))
		}
		err = fmt.Errorf("the interpreter %s did not run (%v): its packages are not recorded", path, err)
		c.mu.Lock()
		c.probes[key] = probeEntry{err: err}
		c.mu.Unlock()
		return nil, err
	}
	c.mu.Lock()
	c.probes[key] = probeEntry{p: &p}
	c.mu.Unlock()
	return &p, nil
}

// packages lists the distributions importable from paths, the first of a
// name winning as it does for Python.
func (c *Cache) packages(paths []string) map[string]string {
	out := map[string]string{}
	for _, d := range paths {
		if d == "" {
			continue
		}
		for name, v := range c.dir(d) {
			if _, ok := out[name]; !ok {
				out[name] = v
			}
		}
	}
	return out
}

func (c *Cache) dir(d string) map[string]string {
	st, err := os.Stat(d)
	if err != nil || !st.IsDir() {
		return nil
	}
	c.mu.Lock()
	e, ok := c.dirs[d]
	c.mu.Unlock()
	if ok && e.mtime.Equal(st.ModTime()) {
		return e.pkgs
	}
	ents, err := os.ReadDir(d)
	if err != nil {
		return nil
	}
	pkgs := map[string]string{}
	for _, ent := range ents {
		n := ent.Name()
		var meta string
		switch {
		case strings.HasSuffix(n, ".dist-info"):
			meta = filepath.Join(d, n, "METADATA")
		case strings.HasSuffix(n, ".egg-info"):
			meta = filepath.Join(d, n)
			if ent.IsDir() {
				meta = filepath.Join(meta, "PKG-INFO")
			}
		default:
			continue
		}
		if name, v := readMetadata(meta); name != "" {
			pkgs[NormalizeName(name)] = v
		}
	}
	c.mu.Lock()
	c.dirs[d] = dirEntry{mtime: st.ModTime(), pkgs: pkgs}
	c.mu.Unlock()
	return pkgs
}

// readMetadata reads Name and Version from the headers of a METADATA or
// PKG-INFO file (the headers end at the first blank line).
func readMetadata(path string) (name, version string) {
	f, err := os.Open(path)
	if err != nil {
		return "", ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() && (name == "" || version == "") {
		l := sc.Text()
		if l == "" {
			break
		}
		if v, ok := strings.CutPrefix(l, "Name:"); ok {
			name = strings.TrimSpace(v)
		} else if v, ok := strings.CutPrefix(l, "Version:"); ok {
			version = strings.TrimSpace(v)
		}
	}
	return name, version
}

// NormalizeName is PEP 503's form of a distribution name.
func NormalizeName(n string) string {
	return strings.ToLower(nameSeps().ReplaceAllString(n, "-"))
}

var nameSeps = lazyRegexp(`[-_.]+`)

// completePython fills the interpreter part (after the start).
func (c *Cache) completePython(ctx context.Context, r *Record, interp, workdir string, env map[string]string) {
	in := &Interpreter{Kind: "python", Path: interp, Conda: env["CONDA_DEFAULT_ENV"], Venv: env["VIRTUAL_ENV"]}
	r.Interpreter = in
	path, err := lookPath(interp, workdir, env)
	if err != nil {
		in.Note = fmt.Sprintf("the interpreter %s was not found (%v): its packages are not recorded", interp, err)
		return
	}
	in.Path = path
	dir := workdir
	if _, err := os.Stat(workdir); errors.Is(err, fs.ErrNotExist) {
		// Removed once the run ended (a harness's temporary directory):
		// the interpreter is read from elsewhere rather than not at all,
		// which a later diff would call a removed interpreter.
		dir = "/"
	}
	p, err := c.probe(ctx, path, dir, env)
	if err != nil {
		in.Note = err.Error()
		return
	}
	in.Version, in.Path = p.Version, p.Executable
	in.Packages = c.packages(p.Path)
	switch {
	case len(in.Packages) == 0:
		in.Note = "no installed distributions found on sys.path"
	case dir != workdir:
		in.Note = "the workspace " + workdir + " was gone when its packages were read: a package importable only from the workspace is not listed"
	}
}

// SortedPackages returns "name==version" lines in name order.
func SortedPackages(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"=="+v)
	}
	sort.Strings(out)
	return out
}
