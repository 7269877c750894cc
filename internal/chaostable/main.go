// Command chaostable runs runbox's fault tests (every TestFault* in the
// module) several times and prints what each provoked and how often the
// promise held, as a Markdown table: `make chaos`.
//
// A fault test states what it does in the comment line right above it:
//
//	// Fault: kill -9 of the run's supervisor -> run lost, no process left
//	func TestFaultSupervisorKilled(t *testing.T) {
//
// The text before "->" is the fault, the text after it the outcome the
// test asserts.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

var faultLine = regexp.MustCompile(`^// Fault: (.*)$`)
var testLine = regexp.MustCompile(`^func (TestFault\w*)\(`)

type fault struct {
	name, pkg, what, outcome string
	pass, fail, skip         int
}

func main() {
	tries := flag.Int("tries", 3, "runs of each fault test")
	root := flag.String("C", ".", "module root")
	flag.Parse()
	faults, err := findFaults(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos:", err)
		os.Exit(1)
	}
	if len(faults) == 0 {
		fmt.Fprintln(os.Stderr, "chaos: no TestFault* with a // Fault: comment found")
		os.Exit(1)
	}
	pkgs := map[string]bool{}
	for _, f := range faults {
		pkgs[f.pkg] = true
	}
	args := []string{"test", "-json", "-count", fmt.Sprint(*tries), "-run", "^TestFault", "-timeout", "30m"}
	for p := range pkgs {
		args = append(args, p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = *root
	cmd.Stderr = os.Stderr
	out, _ := cmd.Output() // failures are counted below
	byName := map[string]*fault{}
	for _, f := range faults {
		byName[f.pkg+"."+f.name] = f
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev struct{ Action, Package, Test, Output string }
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" || strings.Contains(ev.Test, "/") {
			continue
		}
		f := byName[relPkg(ev.Package)+"."+ev.Test]
		if f == nil {
			continue
		}
		switch ev.Action {
		case "pass":
			f.pass++
		case "fail":
			f.fail++
		case "skip":
			f.skip++
		}
	}
	failed := false
	fmt.Println("| fault | tries | outcome |")
	fmt.Println("|---|---|---|")
	for _, f := range faults {
		held := fmt.Sprintf("%d/%d held: %s", f.pass, f.pass+f.fail+f.skip, f.outcome)
		if f.fail > 0 || f.pass == 0 {
			failed = true
			held = fmt.Sprintf("**%d/%d held** (%d failed, %d skipped): %s", f.pass, f.pass+f.fail+f.skip, f.fail, f.skip, f.outcome)
		}
		fmt.Printf("| %s (`%s`) | %d | %s |\n", f.what, f.name, f.pass+f.fail+f.skip, held)
	}
	if failed {
		os.Exit(1)
	}
}

// relPkg turns an import path into the ./dir form go test was given.
func relPkg(importPath string) string {
	const mod = "github.com/runbox/runbox"
	return "./" + strings.TrimPrefix(strings.TrimPrefix(importPath, mod), "/")
}

func findFaults(root string) ([]*fault, error) {
	var out []*fault
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		var comment string
		for _, line := range strings.Split(string(b), "\n") {
			if m := faultLine.FindStringSubmatch(line); m != nil {
				comment = m[1]
				continue
			}
			if m := testLine.FindStringSubmatch(line); m != nil && comment != "" {
				what, outcome, _ := strings.Cut(comment, "->")
				rel, _ := filepath.Rel(root, filepath.Dir(path))
				out = append(out, &fault{name: m[1], pkg: "./" + filepath.ToSlash(rel),
					what: strings.TrimSpace(what), outcome: strings.TrimSpace(outcome)})
			}
			if !strings.HasPrefix(line, "//") {
				comment = ""
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].pkg+out[i].name < out[j].pkg+out[j].name })
	return out, err
}
