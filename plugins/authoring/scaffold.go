// Package authoring helps plugin authors: Scaffold writes a new plugin
// project (runbox plugins new) and RunFixtures runs a plugin over its
// fixtures (runbox plugins test).
package authoring

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"text/template"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/sdk"
)

//go:embed scaffold
var scaffoldFS embed.FS

// Scaffold creates a plugin project NAME of kind in dir (which must not
// exist or be empty): go.mod, main.go with a working example, testdata
// fixtures, Makefile and README. The SDK is vendored into
// third_party/runbox (a copy of this runbox's sdk package) and wired with a
// replace directive, because github.com/runbox/runbox is not published;
// the project builds offline with only the Go toolchain. runbox is the
// runbox binary its `make test` falls back to when none is on PATH (the
// one that made the project).
func Scaffold(dir string, kind sdk.Kind, name, runbox string) error {
	if err := bundle.CheckName(name); err != nil {
		return fmt.Errorf("scaffold: %w", err)
	}
	tmplDir := map[sdk.Kind]string{sdk.KindClassifier: "classifier", sdk.KindProgress: "progress", sdk.KindPlanner: "planner"}[kind]
	if tmplDir == "" {
		return fmt.Errorf("scaffold: unknown kind %q (classifier, progress or planner)", kind)
	}
	if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
		return fmt.Errorf("scaffold: %s is not empty", dir)
	}
	if runbox == "" {
		runbox = "runbox"
	}
	data := struct{ Name, Kind, Runbox string }{name, string(kind), runbox}
	files := map[string][]byte{}
	for _, root := range []string{"scaffold/common", "scaffold/" + tmplDir} {
		err := fs.WalkDir(scaffoldFS, root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			raw, err := scaffoldFS.ReadFile(p)
			if err != nil {
				return err
			}
			t, err := template.New(p).Delims("[[", "]]").Parse(string(raw))
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := t.Execute(&b, data); err != nil {
				return err
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(p, root+"/"), ".tmpl")
			files[rel] = b.Bytes()
			return nil
		})
		if err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	srcs, _ := fs.Glob(sdk.Source, "*.go")
	for _, s := range srcs {
		if strings.HasSuffix(s, "_test.go") || s == "source.go" {
			continue
		}
		b, _ := sdk.Source.ReadFile(s)
		files[path.Join("third_party/runbox/sdk", s)] = b
	}
	files["third_party/runbox/go.mod"] = []byte("module github.com/runbox/runbox\n\ngo 1.24\n")
	for name, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		err := os.MkdirAll(filepath.Dir(p), 0o755)
		if err == nil {
			err = os.WriteFile(p, b, 0o644)
		}
		if err != nil {
			return fmt.Errorf("scaffold: %w", err)
		}
	}
	return nil
}
