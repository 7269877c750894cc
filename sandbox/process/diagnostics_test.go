package process

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDiagnostics(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name    string
		content string // "-" for no file
		want    string
	}{
		{"no file", "-", "no diagnostics"},
		{"empty", "", "no diagnostics"},
		{"short", "panic: boom\n", "panic: boom"},
		{"long keeps the end", strings.Repeat("x", 5000) + "\nfatal: last words\n", strings.Repeat("x", 2048-len("\nfatal: last words\n")) + "\nfatal: last words"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := filepath.Join(dir, string(rune('a'+i)))
			if tt.content != "-" {
				if err := os.WriteFile(p, []byte(tt.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if got := diagnostics(p); got != tt.want {
				t.Errorf("diagnostics = %q (%d bytes), want %q (%d bytes)", got, len(got), tt.want, len(tt.want))
			}
		})
	}
}
