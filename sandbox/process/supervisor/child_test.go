package supervisor

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/runbox/runbox/sandbox"
)

func TestChildEnv(t *testing.T) {
	host := []string{"HOME=/h", "PATH=/bin", "SECRET=x"}
	tests := []struct {
		name string
		spec sandbox.Spec
		want []string
	}{
		{"inherits, spec overrides", sandbox.Spec{Env: []string{"PATH=/opt", "A=1"}}, []string{"HOME=/h", "PATH=/opt", "SECRET=x", "A=1"}},
		{"clean keeps only the allowed", sandbox.Spec{CleanEnv: true, EnvAllow: []string{"HOME"}, Env: []string{"A=1"}}, []string{"HOME=/h", "A=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := childEnv(&tt.spec, host); !slices.Equal(got, tt.want) {
				t.Errorf("childEnv = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), mode); err != nil {
			t.Fatal(err)
		}
	}
	write("tool", 0o755)
	write("noexec", 0o644)
	env := []string{"PATH=" + dir}
	tests := []struct {
		name string
		want string
		code int // 0: found
	}{
		{"tool", filepath.Join(dir, "tool"), 0},
		{"./rel/x", "./rel/x", 0}, // a slash: taken as given
		{"noexec", "", codeCannotExec},
		{"missing", "", codeNotFound},
	}
	for _, tt := range tests {
		got, err := lookPath(tt.name, env, dir)
		var se *startError
		switch {
		case tt.code == 0 && (err != nil || got != tt.want):
			t.Errorf("lookPath(%q) = %q, %v; want %q", tt.name, got, err, tt.want)
		case tt.code != 0 && (!errors.As(err, &se) || se.code != tt.code):
			t.Errorf("lookPath(%q) error %v, want code %d", tt.name, err, tt.code)
		}
	}
}

func TestSafeName(t *testing.T) {
	tests := map[string]string{
		"run-1_a.b": "run-1_a.b",
		"a/b c":     "a_b_c",
		"..hidden":  "hidden",
		"é":         "_",
	}
	for in, want := range tests {
		if got := safeName(in); got != want {
			t.Errorf("safeName(%q) = %q, want %q", in, got, want)
		}
	}
}
