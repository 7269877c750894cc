package proc

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// startTree starts sh, which starts a sleep and says its pid: a child
// and a grandchild of this process.
func startTree(t *testing.T) (cmd *exec.Cmd, child, grandchild int) {
	t.Helper()
	cmd = exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	b := make([]byte, 32)
	n, err := out.Read(b)
	if err != nil {
		t.Fatal(err)
	}
	grandchild, err = strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = (&os.Process{Pid: grandchild}).Kill() })
	return cmd, cmd.Process.Pid, grandchild
}

func TestDescendantsAndSample(t *testing.T) {
	_, child, grandchild := startTree(t)
	got := Descendants(os.Getpid())
	if !slices.Contains(got, child) || !slices.Contains(got, grandchild) {
		t.Fatalf("Descendants = %v, want %d and %d among them", got, child, grandchild)
	}
	if slices.Contains(got, os.Getpid()) {
		t.Errorf("Descendants %v holds the root itself", got)
	}
	st := Sample(context.Background(), []int{child, grandchild, 1 << 30})
	if st.Pids != 2 || st.RSSBytes == 0 {
		t.Errorf("Sample = %+v, want 2 pids (the missing one skipped) and some RSS", st)
	}
}

func TestStartTime(t *testing.T) {
	a, err := StartTime(os.Getpid())
	if err != nil || a == 0 {
		t.Fatalf("StartTime(self) = %d, %v", a, err)
	}
	if b, _ := StartTime(os.Getpid()); b != a {
		t.Errorf("StartTime(self) changed: %d then %d", a, b)
	}
	if _, err := StartTime(1 << 30); err == nil {
		t.Error("StartTime of no process succeeded")
	}
}

func TestWatchExit(t *testing.T) {
	cmd, child, _ := startTree(t)
	start, err := StartTime(child)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := WatchExit(child, start+1); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WatchExit with another start time: %v, want ErrNotExist", err)
	}
	gone, err := WatchExit(child, start)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-gone:
		t.Fatal("closed while the process runs")
	case <-time.After(50 * time.Millisecond):
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	select {
	case <-gone:
	case <-time.After(time.Minute):
		t.Fatal("not closed a minute after the process exited")
	}
	if _, err := WatchExit(child, start); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("WatchExit of a reaped process: %v, want ErrNotExist", err)
	}
}
