package proc

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/shirou/gopsutil/v4/process"
)

// Usage reads /proc itself instead of through gopsutil (to keep
// gopsutil's init out of the runbox binary); it must read the same
// numbers. The child is stopped so both read a process that stands still.
func TestUsageAgreesWithGopsutil(t *testing.T) {
	cmd := exec.Command("sh", "-c", "x=$(head -c 8000000 /dev/zero | tr '\\0' a); i=0; while :; do i=$((i+1)); done")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	deadline := time.Now().Add(time.Minute)
	for {
		_, cpu, ok := Usage(pid)
		if !ok {
			t.Fatal("Usage of a live process failed")
		}
		if cpu >= 0.3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("child used only %.2fs of CPU in a minute", cpu)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the stop land
	rss, cpu, ok := Usage(pid)
	p, err := process.NewProcess(int32(pid))
	if err != nil {
		t.Fatal(err)
	}
	mi, err := p.MemoryInfo()
	if err != nil {
		t.Fatal(err)
	}
	times, err := p.Times()
	if err != nil {
		t.Fatal(err)
	}
	if !ok || rss != mi.RSS || rss < 8_000_000 {
		t.Errorf("rss %d (ok %v), gopsutil says %d; the shell holds an 8 MB string", rss, ok, mi.RSS)
	}
	if want := times.User + times.System; cpu < 0.3 || cpu-want > 0.011 || want-cpu > 0.011 {
		t.Errorf("cpu %.3fs, gopsutil says %.3fs", cpu, want)
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if _, _, ok := Usage(pid); ok {
		t.Error("Usage of a reaped process succeeded")
	}
}
