package supervisor_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
	"github.com/runbox/runbox/sandbox/process/supervisor"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
	"github.com/runbox/runbox/sandbox/runlog"
)

// These tests play the daemon's side of the protocol by hand, with no
// package process: the test binary is the supervisor.
func TestMain(m *testing.M) { supervisortest.Main(m) }

// stateDir writes the Boot of a run of script into a fresh state dir.
func stateDir(t *testing.T, script string) string {
	t.Helper()
	root := t.TempDir()
	dir := filepath.Join(root, "state")
	if err := os.Mkdir(dir, protocol.DirMode); err != nil {
		t.Fatal(err)
	}
	spec := sandbox.Spec{RunID: "r", Command: []string{script}, Shell: true, Workdir: root,
		StateDir: dir, LogPath: filepath.Join(root, "run.log"), Grace: time.Second}
	if err := protocol.WriteJSON(filepath.Join(dir, protocol.SpecFile), protocol.Boot{Spec: spec}, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// startSupervisor execs the test binary as the supervisor with args, the
// ready pipe on fd 3 and, if set, control on fd 4.
func startSupervisor(t *testing.T, control *os.File, args ...string) (*exec.Cmd, *bufio.Reader) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, append([]string{supervisor.Arg}, args...)...)
	cmd.ExtraFiles = []*os.File{w}
	if control != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, control)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { r.Close() })
	return cmd, bufio.NewReader(r)
}

func next(t *testing.T, ready *bufio.Reader) string {
	t.Helper()
	line, err := ready.ReadString('\n')
	if err != nil {
		t.Fatalf("ready pipe: %q, %v", line, err)
	}
	return line
}

// checkRun checks what one run leaves: the messages, the records, the log.
func checkRun(t *testing.T, ready *bufio.Reader, dir string, code int, stdout string) {
	t.Helper()
	if msg := next(t, ready); msg != protocol.ReadyMsg {
		t.Fatalf("first message %q, want %q", msg, protocol.ReadyMsg)
	}
	said, ok := protocol.ParseExited(next(t, ready))
	if !ok || said == nil || said.Code != code {
		t.Fatalf("end message gave %+v (%v), want code %d", said, ok, code)
	}
	// The record's file is in place by the next message (or EOF).
	_, _ = ready.Peek(1)
	disk, err := protocol.ReadExit(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, _ := json.Marshal(said)
	b, _ := json.Marshal(disk)
	if string(a) != string(b) {
		t.Errorf("said %s, exit.json holds %s", a, b)
	}
	if b, err := os.ReadFile(filepath.Join(dir, protocol.SpecFile)); err == nil && len(b) > 0 || protocol.HasSpec(dir) {
		t.Error("spec.json (it may hold secrets) left behind")
	}
	var pid protocol.PidRecord
	if err := protocol.ReadJSON(filepath.Join(dir, protocol.PidFile), &pid); err != nil || pid.Pid == 0 || pid.Start == 0 {
		t.Errorf("pid record %+v, %v", pid, err)
	}
	var out []byte
	err = runlog.ReadAll(filepath.Join(filepath.Dir(dir), "run.log"), func(r runlog.Record) error {
		if r.Stream == runlog.Stdout {
			out = append(out, r.Data...)
		}
		return nil
	})
	if err != nil || string(out) != stdout {
		t.Errorf("stdout %q (%v), want %q", out, err, stdout)
	}
}

func TestOneRun(t *testing.T) {
	dir := stateDir(t, "echo hi; exit 3")
	cmd, ready := startSupervisor(t, nil, dir)
	checkRun(t, ready, dir, 3, "hi\n")
	if line, err := ready.ReadString('\n'); err == nil {
		t.Errorf("message %q after the end of a one-run supervisor", line)
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("supervisor: %v", err)
	}
}

func TestStandbyServesRunsUntilLetGo(t *testing.T) {
	cr, cw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd, ready := startSupervisor(t, cr, protocol.StandbyArg)
	cr.Close()
	for i := range 2 {
		dir := stateDir(t, "echo "+strconv.Itoa(i))
		if _, err := cw.WriteString(protocol.RunMsg(dir)); err != nil {
			t.Fatal(err)
		}
		checkRun(t, ready, dir, 0, strconv.Itoa(i)+"\n")
		if msg := next(t, ready); msg != protocol.IdleMsg {
			t.Fatalf("after run %d: %q, want %q", i, msg, protocol.IdleMsg)
		}
		var pid protocol.PidRecord
		_ = protocol.ReadJSON(filepath.Join(dir, protocol.PidFile), &pid)
		if pid.Pid != cmd.Process.Pid {
			t.Errorf("run %d served by pid %d, want the standby %d", i, pid.Pid, cmd.Process.Pid)
		}
	}
	cw.Close() // the starter lets it go
	if err := cmd.Wait(); err != nil {
		t.Errorf("standby let go: %v", err)
	}
}

func TestUsage(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	err = exec.Command(exe, supervisor.Arg).Run()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 {
		t.Errorf("supervisor without a state dir: %v, want exit status 2", err)
	}
}
