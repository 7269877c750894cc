package process_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/process"
)

// BenchmarkStartTrue is Start+Wait of `true`: the floor under `runbox run -- true`.
//
//	go test ./sandbox/process -run '^$' -bench StartTrue
func BenchmarkStartTrue(b *testing.B) {
	sb := newSandbox(process.Options{})
	for b.Loop() {
		b.StopTimer()
		spec := newSpec(b, "true")
		b.StartTimer()
		if e := wait(b, start(b, sb, spec)); e.Code != 0 {
			b.Fatalf("exit %+v", e)
		}
	}
}

// BenchmarkOutput writes 1 GiB of 60-byte lines through the sandbox's log,
// and, for comparison, the same child redirected straight to a file.
//
//	go test ./sandbox/process -run '^$' -bench Output -benchtime 3x
func BenchmarkOutput(b *testing.B) {
	const size = 1 << 30
	gen := "yes " + strings.Repeat("x", 59) + " | head -c " + strconv.Itoa(size)
	b.Run("sandbox", func(b *testing.B) {
		b.SetBytes(size)
		sb := newSandbox(process.Options{})
		for b.Loop() {
			b.StopTimer()
			spec := shSpec(b, gen)
			b.StartTimer()
			if e := wait(b, start(b, sb, spec)); e.Code != 0 {
				b.Fatalf("exit %+v", e)
			}
			b.StopTimer()
			os.Remove(spec.LogPath)
			b.StartTimer()
		}
	})
	b.Run("file", func(b *testing.B) {
		b.SetBytes(size)
		for b.Loop() {
			b.StopTimer()
			out := filepath.Join(b.TempDir(), "out")
			b.StartTimer()
			if err := exec.Command("sh", "-c", gen+" > "+out).Run(); err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			os.Remove(out)
			b.StartTimer()
		}
	})
}
