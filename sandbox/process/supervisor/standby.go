package supervisor

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/internal/proc"
	"github.com/runbox/runbox/sandbox/process/internal/protocol"
)

// maxServed bounds how many runs one standby supervisor serves before it
// exits and a fresh one takes over, so nothing one run leaves in the
// process (a leak in a library, a fragmented heap) can grow without end.
const maxServed = 256

// serveRuns is a standby supervisor: it warms up, then serves the runs
// whose state directories arrive on the control pipe, one at a time.
// After each run it says "idle" on the ready pipe if it can serve another
// (the run left nothing behind: no process, no open pipe, no failed log
// write), and waits for the next directory; its starter either sends one
// or closes the pipe, and then it exits. A starter that died (kill -9 of
// the daemon) closes the pipe too, so a supervisor never outlives its
// daemon by more than the run it was serving.
func serveRuns(sigs chan os.Signal) int {
	se := &session{sigs: sigs, self: os.Getpid(), selfStart: warmUp(), ready: readyPipe()}
	// A blocking read: the kernel wakes this thread itself when the run
	// arrives, one hand-off fewer than through the runtime's poller.
	_ = syscall.SetNonblock(protocol.ControlFD, false)
	control := bufio.NewReader(os.NewFile(protocol.ControlFD, "control"))
	defer func() {
		if se.ready != nil {
			se.ready.Close()
		}
	}()
	for served := 1; ; served++ {
		dir, ok := awaitRun(control)
		if !ok {
			return 0 // the starter let us go
		}
		// A signal still queued from the previous run is not for this one.
		for len(sigs) > 0 {
			<-sigs
		}
		code, reusable := se.serve(dir)
		if !reusable || served >= maxServed || se.ready == nil {
			return code
		}
		if _, err := se.ready.Write([]byte(protocol.IdleMsg)); err != nil {
			return code
		}
		se.prevDir = dir
	}
}

// warmUp does, while the standby waits, the work of a run's first
// milliseconds that does not depend on the run: its own start time (which
// it returns), and the first pass through the JSON codecs of the spec and
// the records (encoding/json builds its per-type codecs on first use).
// Everything else in a standby is still cold code the kernel pages in on
// first touch, until its first run.
func warmUp() (selfStart uint64) {
	selfStart, _ = proc.StartTime(os.Getpid())
	sample := protocol.Boot{Spec: sandbox.Spec{
		RunID: "warm", Command: []string{"true"}, Env: []string{"A=1"}, Setup: []string{"true"},
		Assets: []sandbox.Asset{{Src: "/a", Dst: "a"}}, Timeout: time.Second,
	}}
	if b, err := json.Marshal(sample); err == nil {
		var back protocol.Boot
		_ = json.Unmarshal(b, &back)
	}
	_, _ = json.Marshal(protocol.PidRecord{Pid: 1, Start: 1})
	_, _ = json.Marshal(sandbox.Exit{Code: 1, StartedAt: time.Now(), EndedAt: time.Now()})
	return selfStart
}

// awaitRun blocks until the next run's state directory arrives on the
// control pipe and moves this process's stderr to that run's
// supervisor.log. ok is false when the starter let it go or went away.
func awaitRun(control *bufio.Reader) (dir string, ok bool) {
	line, _ := control.ReadString('\n')
	if dir, ok = protocol.ParseRunMsg(line); !ok {
		return "", false
	}
	logf, err := os.OpenFile(filepath.Join(dir, protocol.SuperLog), os.O_CREATE|os.O_WRONLY|os.O_APPEND, protocol.SecretMode)
	if err == nil {
		_ = unix.Dup2(int(logf.Fd()), 2)
		logf.Close()
	}
	return dir, true
}
