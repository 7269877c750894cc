package record

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// gitRepo makes a real repository with train.py committed.
func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	dir := t.TempDir()
	git(t, dir, "init", "-q", "-b", "main")
	git(t, dir, "remote", "add", "origin", "https://alice:ghp_secrettoken1234567890@example.com/team/repo.git")
	write(t, dir, "train.py", "print('hi')\n")
	write(t, dir, ".gitignore", "data/\n")
	git(t, dir, "add", ".")
	git(t, dir, "commit", "-q", "-m", "init")
	return dir
}

func git(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
	return strings.TrimSpace(string(out))
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// The fast part reads what git itself would say, without running git, and
// never keeps a credential of the remote.
func TestFastReadsGitWithoutCredentials(t *testing.T) {
	dir := gitRepo(t)
	head := git(t, dir, "rev-parse", "HEAD")
	r := Fast(Input{Command: []string{"python3", "train.py", "--lr", "0.1"}, Workdir: dir}, time.Now())
	if r.Code == nil || r.Code.Commit != head || r.Code.Branch != "main" {
		t.Fatalf("code %+v, want commit %s on main", r.Code, head)
	}
	if r.Code.Remote != "https://example.com/team/repo.git" {
		t.Fatalf("remote %q: credentials kept or url lost", r.Code.Remote)
	}
	if r.Script == nil || r.Script.SHA256 == "" || r.Script.Path != "train.py" {
		t.Fatalf("script %+v", r.Script)
	}
	if r.Params["lr"] != "0.1" {
		t.Fatalf("params %v", r.Params)
	}
	// Packed refs (after git gc) and a linked worktree are read too.
	git(t, dir, "pack-refs", "--all")
	wt := filepath.Join(t.TempDir(), "wt")
	git(t, dir, "worktree", "add", "-q", "-b", "other", wt)
	r = Fast(Input{Command: []string{"true"}, Workdir: wt}, time.Now())
	if r.Code == nil || r.Code.Commit != head || r.Code.Branch != "other" || r.Code.Remote != "https://example.com/team/repo.git" {
		t.Fatalf("worktree code %+v", r.Code)
	}
}

func TestStripCredentials(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"https://user:pass@github.com/a/b.git", "https://github.com/a/b.git"},
		{"https://ghp_abcdefghijklmnop@github.com/a/b", "https://github.com/a/b"},
		{"git@github.com:a/b.git", "git@github.com:a/b.git"},
		{"ssh://git@host/x", "ssh://host/x"},
		{"/srv/repo.git", "/srv/repo.git"},
	} {
		if got := StripCredentials(c.in); got != c.want {
			t.Errorf("StripCredentials(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestNotAGitRepository(t *testing.T) {
	dir := t.TempDir()
	if _, ok := findGit(dir); ok {
		t.Skip("the temp dir is inside a git repository")
	}
	r := Fast(Input{Command: []string{"sh", "x.sh"}, Workdir: dir}, time.Now())
	if r.Code != nil || len(r.Notes) == 0 || !strings.Contains(r.Notes[0], "not in a git repository") {
		t.Fatalf("code %+v notes %v: want no code part and a note saying why", r.Code, r.Notes)
	}
	NewCache().Complete(context.Background(), r, Input{Command: []string{"sh", "x.sh"}, Workdir: dir})
	if !r.Complete || r.Host == nil {
		t.Fatalf("a record outside git still completes: %+v", r)
	}
}

// The uncommitted diff is kept up to its bound and what was cut is said;
// past the counting bound git is stopped, not read to the end. The bounds
// are lowered here so that the test writes megabytes, not gigabytes.
func TestDirtyDiffIsBounded(t *testing.T) {
	dir := gitRepo(t)
	defer func(k, c int64) { maxDiff, diffCountLimit = k, c }(maxDiff, diffCountLimit)
	maxDiff, diffCountLimit = 64<<10, 2<<20
	write(t, dir, "train.py", strings.Repeat("print('a line of new code')\n", 1<<15)) // ~900 KiB of diff
	write(t, dir, "notes.txt", "untracked\n")
	write(t, dir, "data/big.bin", "ignored\n")
	r := Fast(Input{Command: []string{"python3", "train.py"}, Workdir: dir}, time.Now())
	for _, n := range completeGit(context.Background(), r.Code) {
		t.Errorf("note: %s", n)
	}
	c := r.Code
	if !c.Dirty || int64(len(c.Diff)) != maxDiff || c.DiffBytes <= maxDiff || !strings.Contains(c.DiffCut, "kept its first 64 KiB") {
		t.Fatalf("diff of %d bytes kept %d, cut %q", c.DiffBytes, len(c.Diff), c.DiffCut)
	}
	if !slices.Equal(c.DiffFiles, []string{"train.py"}) || !slices.Equal(c.Untracked, []string{"notes.txt"}) {
		t.Fatalf("files %v untracked %v (ignored data/ must not be listed)", c.DiffFiles, c.Untracked)
	}
	write(t, dir, "train.py", strings.Repeat("print('a line of new code')\n", 1<<17)) // ~3.5 MiB
	r = Fast(Input{Command: []string{"python3", "train.py"}, Workdir: dir}, time.Now())
	completeGit(context.Background(), r.Code)
	if !strings.Contains(r.Code.DiffCut, "over 2 MiB") || int64(len(r.Code.Diff)) != maxDiff {
		t.Fatalf("a diff over the counting bound: cut %q, kept %d", r.Code.DiffCut, len(r.Code.Diff))
	}
}

// A real interpreter's packages are read from its site-packages METADATA,
// a fake distribution on PYTHONPATH included; a changed one shows in the
// next record (the listing cache follows the directory's mtime).
func TestPythonPackages(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	site := t.TempDir()
	write(t, site, "fakepkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: Fake_Pkg\nVersion: 1.0\n\n")
	env := []string{"PATH=" + filepath.Dir(py) + ":" + os.Getenv("PATH"), "PYTHONPATH=" + site, "HOME=" + os.Getenv("HOME")}
	in := Input{Command: []string{"python3", "train.py"}, Workdir: t.TempDir(), RunEnv: env}
	c := NewCache()
	r := Fast(in, time.Now())
	c.Complete(context.Background(), r, in)
	if r.Interpreter == nil || r.Interpreter.Version == "" || r.Interpreter.Packages["fake-pkg"] != "1.0" {
		t.Fatalf("interpreter %+v", r.Interpreter)
	}
	if err := os.RemoveAll(filepath.Join(site, "fakepkg-1.0.dist-info")); err != nil {
		t.Fatal(err)
	}
	write(t, site, "fakepkg-2.0.dist-info/METADATA", "Name: fake-pkg\nVersion: 2.0\n")
	// Make sure the directory's mtime moves even on a coarse clock.
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(site, later, later)
	r2 := Fast(in, time.Now())
	c.Complete(context.Background(), r2, in)
	if r2.Interpreter.Packages["fake-pkg"] != "2.0" {
		t.Fatalf("after the upgrade: %v", r2.Interpreter.Packages["fake-pkg"])
	}
	cs := Diff(Side{Record: r}, Side{Record: r2})
	if len(cs) != 1 || cs[0].Kind != "package" || cs[0].Name != "fake-pkg" || cs[0].Detail != "upgraded" {
		t.Fatalf("diff %v", cs)
	}
}

// A workspace removed before the record was completed (a harness's
// temporary directory, removed as soon as the run returned) still gets
// its interpreter and packages, read from elsewhere, and says so: the
// probe used to fail on its chdir, and a later diff called the
// interpreter removed.
func TestPythonPackagesOfAWorkspaceThatIsGone(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 is not installed")
	}
	site := t.TempDir()
	write(t, site, "fakepkg-1.0.dist-info/METADATA", "Metadata-Version: 2.1\nName: Fake_Pkg\nVersion: 1.0\n\n")
	work := filepath.Join(t.TempDir(), "tmpwork")
	write(t, work, "train.py", "print(1)\n")
	env := []string{"PATH=" + filepath.Dir(py) + ":" + os.Getenv("PATH"), "PYTHONPATH=" + site, "HOME=" + os.Getenv("HOME")}
	in := Input{Command: []string{"python3", "train.py"}, Workdir: work, RunEnv: env}
	r := Fast(in, time.Now())
	if err := os.RemoveAll(work); err != nil {
		t.Fatal(err)
	}
	NewCache().Complete(context.Background(), r, in)
	if i := r.Interpreter; i == nil || i.Version == "" || i.Packages["fake-pkg"] != "1.0" || !strings.Contains(i.Note, "was gone") {
		t.Fatalf("interpreter %+v", r.Interpreter)
	}
}

// A broken interpreter does not stop the record: it says why the packages
// are missing.
func TestBrokenInterpreter(t *testing.T) {
	bin := t.TempDir()
	write(t, bin, "python3", "#!/bin/sh\necho 'ImportError: broken site' >&2\nexit 3\n")
	in := Input{Command: []string{"python3", "train.py"}, Workdir: t.TempDir(), RunEnv: []string{"PATH=" + bin}}
	r := Fast(in, time.Now())
	NewCache().Complete(context.Background(), r, in)
	if r.Interpreter == nil || r.Interpreter.Packages != nil || !strings.Contains(r.Interpreter.Note, "did not run") || !strings.Contains(r.Interpreter.Note, "broken site") {
		t.Fatalf("interpreter %+v", r.Interpreter)
	}
	in.RunEnv = []string{"PATH=" + t.TempDir()}
	r = Fast(in, time.Now())
	NewCache().Complete(context.Background(), r, in)
	if !strings.Contains(r.Interpreter.Note, "not found") {
		t.Fatalf("a missing interpreter: %+v", r.Interpreter)
	}
}

func TestParams(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want map[string]string
	}{
		{[]string{"python3", "-u", "train.py", "--lr", "0.1", "--epochs=3", "--fast", "seed=2"}, map[string]string{"lr": "0.1", "epochs": "3", "fast": "true", "seed": "2"}},
		{[]string{"python", "-m", "pkg.train", "--lr", "1e-3"}, map[string]string{"lr": "1e-3"}},
		{[]string{"./run.sh", "a/b=c"}, nil},
		{[]string{"true"}, nil},
	} {
		got := Params(c.cmd)
		if len(got) != len(c.want) {
			t.Errorf("Params(%v) = %v, want %v", c.cmd, got, c.want)
			continue
		}
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("Params(%v)[%s] = %q, want %q", c.cmd, k, got[k], v)
			}
		}
	}
}

// A diff names only what differs, most suspect first: a package upgrade
// before a parameter change; a run with itself has nothing.
func TestDiffRanksAndIsExact(t *testing.T) {
	a := &Record{Command: []string{"python", "t.py", "--lr", "0.1"}, Params: map[string]string{"lr": "0.1"}, Sandbox: "process",
		Env:         []string{"A=1", "TOKEN_KEY=<redacted>"},
		Interpreter: &Interpreter{Version: "3.11", Packages: map[string]string{"torch": "2.2.1", "numpy": "1.26"}},
		Host:        &Host{OS: "linux", Arch: "amd64", CPUs: 8, Driver: "535"}}
	b := &Record{Command: []string{"python", "t.py", "--lr", "0.2"}, Params: map[string]string{"lr": "0.2"}, Sandbox: "docker",
		Env:         []string{"A=1", "TOKEN_KEY=<redacted>"},
		Interpreter: &Interpreter{Version: "3.11", Packages: map[string]string{"torch": "2.3.0", "numpy": "1.26"}},
		Host:        &Host{OS: "linux", Arch: "amd64", CPUs: 8, Driver: "550"}}
	cs := Diff(Side{Record: a, State: "succeeded"}, Side{Record: b, State: "failed"})
	var got []string
	for _, c := range cs {
		got = append(got, c.Kind+" "+c.Name)
	}
	want := []string{"package torch", "gpu driver", "param lr", "sandbox backend", "outcome state"}
	if !slices.Equal(got, want) {
		t.Fatalf("diff %v, want %v", got, want)
	}
	if s := cs[0].String(); s != "package torch: 2.2.1 → 2.3.0 (upgraded)" {
		t.Fatalf("line %q", s)
	}
	if cs := Diff(Side{Record: a}, Side{Record: a}); len(cs) != 0 {
		t.Fatalf("a run with itself: %v", cs)
	}
	if sw := SinceWorked(Side{Record: a, State: "succeeded"}, Side{Record: a, State: "failed"}); len(sw) != 0 {
		t.Fatalf("since it worked, nothing differs: %v", sw)
	}
}

// Two runs of a script of the same name in two projects: the workspace
// that differs is named first (a diff between them listed commits and
// untracked files as if one project had changed into the other).
func TestDiffNamesAnotherWorkspaceFirst(t *testing.T) {
	a := &Record{Command: []string{"python3", "train.py"}, Workdir: "/work/g", Sandbox: "process",
		Interpreter: &Interpreter{Version: "3.11", Packages: map[string]string{"torch": "2.2.1"}}}
	b := &Record{Command: []string{"python3", "train.py"}, Workdir: "/work/g2", Sandbox: "process",
		Interpreter: &Interpreter{Version: "3.11", Packages: map[string]string{"torch": "2.3.0"}}}
	cs := SinceWorked(Side{Record: a, State: "succeeded"}, Side{Record: b, State: "failed"})
	if len(cs) != 2 || cs[0].String() != "workdir: /work/g → /work/g2" || cs[1].Kind != "package" {
		t.Fatalf("changes %v", cs)
	}
	b.Workdir = a.Workdir
	if cs := SinceWorked(Side{Record: a}, Side{Record: b}); len(cs) != 1 || cs[0].Kind != "package" {
		t.Fatalf("same workspace: %v", cs)
	}
}

// Compare shows only differing params, best per goal, and pages 500 runs.
func TestCompare(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	rows := []Row{
		{RunID: "a", Params: map[string]string{"lr": "0.1", "epochs": "3"}, Metrics: map[string]Metric{"loss": {Last: 0.5, Best: f(0.4)}, "acc": {Last: 0.8, Best: f(0.9)}}},
		{RunID: "b", Params: map[string]string{"lr": "0.01", "epochs": "3"}, Metrics: map[string]Metric{"loss": {Last: 0.3, Best: f(0.2)}}},
		{RunID: "c", Params: map[string]string{"lr": "1", "epochs": "3"}},
	}
	c := Compare(rows, CompareOptions{})
	if !slices.Equal(c.Params, []string{"lr"}) || c.Sort != "best:acc" {
		t.Fatalf("params %v sort %q", c.Params, c.Sort)
	}
	c = Compare(rows, CompareOptions{Sort: "best:loss"})
	if ids := []string{c.Rows[0].RunID, c.Rows[1].RunID, c.Rows[2].RunID}; !slices.Equal(ids, []string{"b", "a", "c"}) {
		t.Fatalf("by best loss: %v", ids)
	}
	if _, ok := c.Rows[0].Params["epochs"]; ok {
		t.Fatal("a param that does not differ is shown")
	}
	if c := Compare(rows, CompareOptions{AllParams: true}); !slices.Equal(c.Params, []string{"epochs", "lr"}) {
		t.Fatalf("all params: %v", c.Params)
	}
	if c := Compare(rows, CompareOptions{Filter: map[string]string{"lr": "0.1"}}); c.Total != 1 || c.Rows[0].RunID != "a" {
		t.Fatalf("filtered: %+v", c)
	}
	if g := GoalOf("val/accuracy", nil); g != Max {
		t.Fatalf("goal of accuracy %q", g)
	}
	if g := GoalOf("loss", map[string]Goal{"loss": Max}); g != Max {
		t.Fatalf("configured goal %q", g)
	}
	var many []Row
	for i := range 500 {
		many = append(many, Row{RunID: string(rune('a'+i%26)) + strings.Repeat("x", i/26), Metrics: map[string]Metric{"loss": {Last: float64(i), Best: f(float64(500 - i))}}})
	}
	p := Compare(many, CompareOptions{Limit: 50, Offset: 100})
	if p.Total != 500 || len(p.Rows) != 50 || *p.Rows[0].Metrics["loss"].Best != 101 {
		t.Fatalf("page: total %d rows %d first best %v", p.Total, len(p.Rows), *p.Rows[0].Metrics["loss"].Best)
	}
}

// A snapshot copies the code as it is, leaves ignored and large files in
// place (linked), and says so.
func TestSnapshot(t *testing.T) {
	dir := gitRepo(t)
	write(t, dir, "train.py", "print('edited, not committed')\n")
	write(t, dir, "new.py", "x = 1\n")
	write(t, dir, "data/set.csv", "a,b\n")
	defer func() {}()
	dest := filepath.Join(t.TempDir(), "snap")
	s, err := TakeSnapshot(context.Background(), dir, dest, "")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dest, "train.py"))
	if string(b) != "print('edited, not committed')\n" {
		t.Fatalf("train.py in the copy: %q", b)
	}
	write(t, dir, "train.py", "print('edited after')\n")
	if b, _ := os.ReadFile(filepath.Join(dest, "train.py")); string(b) != "print('edited, not committed')\n" {
		t.Fatalf("the copy follows later edits: %q", b)
	}
	if st, err := os.Lstat(filepath.Join(dest, "data")); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("ignored data/ is not linked: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "data", "set.csv")); string(b) != "a,b\n" {
		t.Fatal("data is not reachable through the link")
	}
	if s.Files != 3 || !slices.ContainsFunc(s.Left, func(l string) bool { return strings.HasPrefix(l, "data") }) {
		t.Fatalf("snapshot %+v", s)
	}
}

// Outside git every file is a candidate: the budget goes to the files
// nearest the top (the code, not the data deep under it, whatever the
// names' order), a directory with nothing copied is one link, and
// runbox's own home inside the workspace is linked, never copied.
func TestSnapshotOfATreeOverBudget(t *testing.T) {
	defer func(b struct {
		files int
		bytes int64
	}) {
		budget = b
	}(budget)
	budget.files = 10
	dir := t.TempDir()
	write(t, dir, "train.py", "print('code')\n")
	for i := range 30 {
		write(t, dir, fmt.Sprintf("data1/x/f%02d.csv", i), "1\n")
		write(t, dir, fmt.Sprintf("data2/x/f%02d.csv", i), "2\n")
	}
	write(t, dir, "home/state/store.db", "runbox's\n")
	dest := filepath.Join(t.TempDir(), "snap")
	s, err := TakeSnapshot(context.Background(), dir, dest, filepath.Join(dir, "home", "state"))
	if err != nil {
		t.Fatal(err)
	}
	isLink := func(rel string) bool {
		st, err := os.Lstat(filepath.Join(dest, rel))
		return err == nil && st.Mode()&os.ModeSymlink != 0
	}
	if isLink("train.py") || s.Files != 10 {
		t.Errorf("train.py a link: %v; %d files copied, want 10 (the budget)", isLink("train.py"), s.Files)
	}
	if !isLink("data2") || !isLink("home") {
		t.Errorf("data2 a link: %v, home a link: %v; want both one link, nothing under them copied", isLink("data2"), isLink("home"))
	}
	ents, _ := os.ReadDir(filepath.Join(dest, "data1", "x"))
	links := 0
	for _, e := range ents {
		if isLink(filepath.Join("data1", "x", e.Name())) {
			links++
		}
	}
	if len(ents) != 30 || links != 21 || isLink("data1/x/f00.csv") {
		t.Errorf("data1/x: %d entries, %d links; want 9 copies (from f00) and 21 links", len(ents), links)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "data2", "x", "f29.csv")); string(b) != "2\n" {
		t.Errorf("data2 through its link: %q", b)
	}
	if !slices.Contains(s.Left, filepath.Join("home", "state")+" (runbox's own state)") {
		t.Errorf("left: %v, want runbox's home named", s.Left)
	}
	if slices.ContainsFunc(s.Left, func(l string) bool { return strings.HasPrefix(l, "data2 ") || strings.HasPrefix(l, "home ") }) {
		t.Errorf("left: %v: a directory named again beside its files", s.Left)
	}
}

// Outside git, Python and conda environments, node_modules and caches
// are left in place (one link each), as a .gitignore would have them;
// the code beside them is copied.
func TestSnapshotLeavesEnvironmentsInPlace(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "src/model.py", "x = 1\n")
	write(t, dir, "src/__pycache__/model.cpython-312.pyc", "bytecode")
	write(t, dir, ".venv/pyvenv.cfg", "home = /usr/bin\n")
	write(t, dir, ".venv/lib/python3.12/site-packages/torch/__init__.py", "\n")
	write(t, dir, "envs/cuda/conda-meta/history", "\n")
	write(t, dir, "envs/cuda/bin/python", "\n")
	write(t, dir, "web/node_modules/left-pad/index.js", "\n")
	write(t, dir, "venv-notes/pyvenv.txt", "not an environment\n")
	dest := filepath.Join(t.TempDir(), "snap")
	s, err := TakeSnapshot(context.Background(), dir, dest, "")
	if err != nil {
		t.Fatal(err)
	}
	// Each is linked, or the directory above it is (nothing else there).
	for env, link := range map[string]string{"src/__pycache__": "src/__pycache__", ".venv": ".venv", "envs/cuda": "envs", "web/node_modules": "web"} {
		st, err := os.Lstat(filepath.Join(dest, link))
		if err != nil || st.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s: %s is not a link (%v)", env, link, err)
		}
		if !slices.Contains(s.Left, filepath.FromSlash(env)+" (an environment or cache)") {
			t.Errorf("left %v: %s not named", s.Left, env)
		}
	}
	if s.Files != 2 {
		t.Errorf("%d files copied, want 2 (src/model.py, venv-notes/pyvenv.txt)", s.Files)
	}
}

// Two runs on different commits: the diff says which files the commits
// change.
func TestExplainCommits(t *testing.T) {
	dir := gitRepo(t)
	a := Fast(Input{Command: []string{"python3", "train.py"}, Workdir: dir}, time.Now())
	write(t, dir, "model.py", "x = 2\n")
	git(t, dir, "add", "model.py")
	git(t, dir, "commit", "-q", "-m", "model")
	b := Fast(Input{Command: []string{"python3", "train.py"}, Workdir: dir}, time.Now())
	cs := Diff(Side{Record: a}, Side{Record: b})
	ExplainCommits(context.Background(), a, b, cs)
	if len(cs) != 1 || cs[0].Name != "commit" || cs[0].Detail != "1 file(s) differ: model.py" {
		t.Fatalf("diff %+v", cs)
	}
}
