package ui

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"regexp"
	"strings"
	"testing"
)

// The vendored uPlot files are what `make ui-vendor` wrote from the pinned,
// integrity-checked npm tarball: each matches the SHA256SUMS the rule made
// from it, and that file names the version and integrity the Makefile pins
// (so bumping one without re-running the rule fails here).
func TestVendoredAssets(t *testing.T) {
	sums, err := assets.ReadFile("assets/vendor/SHA256SUMS")
	if err != nil {
		t.Fatal(err)
	}
	mk, err := os.ReadFile("Makefile.inc")
	if err != nil {
		t.Fatal(err)
	}
	ver := regexp.MustCompile(`(?m)^UPLOT_VERSION\s*:=\s*(\S+)`).FindSubmatch(mk)
	integ := regexp.MustCompile(`(?m)^UPLOT_INTEGRITY\s*:=\s*(\S+)`).FindSubmatch(mk)
	if ver == nil || integ == nil {
		t.Fatal("Makefile.inc pins no uPlot version or integrity")
	}
	lines := strings.Split(strings.TrimSpace(string(sums)), "\n")
	if want := "# uplot@" + string(ver[1]) + " " + string(integ[1]); lines[0] != want {
		t.Fatalf("SHA256SUMS is from %q, the Makefile pins %q: run make ui-vendor", lines[0], want)
	}
	if len(lines) != 4 {
		t.Fatalf("SHA256SUMS lists %d files, want 3", len(lines)-1)
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		b, err := assets.ReadFile("assets/vendor/" + f[1])
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		if hex.EncodeToString(sum[:]) != f[0] {
			t.Errorf("%s differs from what make ui-vendor fetched", f[1])
		}
	}
}
