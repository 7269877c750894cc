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

// A Go runtime crash says why first ("runtime/cgo: pthread_create
// failed") and where last: a long one keeps both, and stays bounded.
func TestDiagnosticsKeepBothEnds(t *testing.T) {
	p := filepath.Join(t.TempDir(), "super.log")
	crash := "runtime/cgo: pthread_create failed: Resource temporarily unavailable\n" + strings.Repeat("goroutine frames\n", 2000) + "rip    0x7fb24d97beec\n"
	if err := os.WriteFile(p, []byte(crash), 0o600); err != nil {
		t.Fatal(err)
	}
	got := diagnostics(p)
	if !strings.HasPrefix(got, "runtime/cgo: pthread_create failed") || !strings.HasSuffix(got, "rip    0x7fb24d97beec") || len(got) > 4200 {
		t.Errorf("diagnostics (%d bytes) = %.120q ... %.80q; want the first line, the last, at most ~4 KiB", len(got), got, got[max(0, len(got)-80):])
	}
}
