package confine

import (
	"os/exec"
	"syscall"
	"testing"
)

// BenchmarkStartInThread is what confining costs a supervisor per command:
// start /bin/true on a confined thread and wait for it, per level (none:
// a plain start).
func BenchmarkStartInThread(b *testing.B) {
	for _, level := range Levels {
		b.Run(string(level), func(b *testing.B) {
			if err := Probe().Can(level); err != nil {
				b.Skip(err)
			}
			p := Policy{Level: level, Workdir: b.TempDir(), TempDir: b.TempDir(), RuntimeDir: PrivateRuntimeDir(0)}
			for b.Loop() {
				cmd := exec.Command("/bin/true")
				cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
				if level == None {
					if err := cmd.Run(); err != nil {
						b.Fatal(err)
					}
					continue
				}
				release, err := StartInThread(p, "/bin/true", cmd.Start)
				if err != nil {
					b.Fatal(err)
				}
				if err := cmd.Wait(); err != nil {
					b.Fatal(err)
				}
				release()
			}
		})
	}
}
