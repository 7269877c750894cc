package process_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox/process"
)

// BenchmarkStartTrue is Start+Wait of `true`: the floor under `runbox run -- true`,
// with the run's cgroup (the default where one can be made) and without.
//
//	go test ./sandbox/process -run '^$' -bench StartTrue
func BenchmarkStartTrue(b *testing.B) {
	for _, bc := range []struct {
		name string
		opts process.Options
	}{
		{"cgroup", process.Options{}},
		{"nocgroup", process.Options{NoCgroup: true}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			sb := newSandbox(bc.opts)
			for b.Loop() {
				b.StopTimer()
				spec := newSpec(b, "true")
				b.StartTimer()
				if e := wait(b, start(b, sb, spec)); e.Code != 0 {
					b.Fatalf("exit %+v", e)
				}
			}
		})
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

// BenchmarkStartStandby: Start+Wait of `true`, with and without a standby
// supervisor, for runs that arrive apart (the pause between runs is not
// timed; it lets the standby be refilled, as between a user's commands).
// RUNBOX_BIN points it at the real runbox binary (its start-up cost is what
// a standby hides); by default the test binary serves as supervisor.
func BenchmarkStartStandby(b *testing.B) {
	exe := os.Getenv("RUNBOX_BIN")
	for _, standby := range []bool{false, true} {
		b.Run(fmt.Sprintf("standby=%v", standby), func(b *testing.B) {
			sb := newSandbox(process.Options{Exe: exe, Standby: standby})
			defer sb.Close()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				spec := newSpec(b, "true")
				time.Sleep(100 * time.Millisecond)
				b.StartTimer()
				if ex := wait(b, start(b, sb, spec)); ex.Code != 0 {
					b.Fatalf("exit %+v", ex)
				}
			}
		})
	}
}
