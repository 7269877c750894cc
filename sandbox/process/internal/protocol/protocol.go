// Package protocol is what the two sides of a process run agree on: the
// daemon-side handle (package process) and the supervisor it starts
// (package supervisor). It holds the argv and file descriptors a
// supervisor is started with, the files of a run's state directory and
// the records in them, and the messages on the ready and control pipes.
// Each is written here once; neither side spells one out itself.
package protocol

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/runbox/runbox/internal/jsonfile"
	"github.com/runbox/runbox/sandbox"
)

// How a supervisor is started: argv `EXE ARGS... STATE_DIR`, or
// `EXE ARGS... StandbyArg` for a standby that takes its runs from
// ControlFD. ReadyFD is the write end of the ready pipe in both.
const (
	StandbyArg = "--standby"
	ReadyFD    = 3
	ControlFD  = 4
)

// Files in a run's state directory. The directory is private to one run
// (DirMode).
//
//	spec.json        Boot, written by Start (SecretMode); the supervisor
//	                 empties it as soon as it has read it, so env secrets
//	                 do not stay on disk (HasSpec: written, not yet taken)
//	supervisor.json  PidRecord of the supervisor (written before the child starts)
//	supervisor.log   the supervisor's own stderr (panics, failures to open the log)
//	stop.json        a StopRequest; the supervisor reads it on SIGTERM
//	exit.json        the sandbox.Exit record, written last and atomically
//	stdin            the run's stdin bytes, unlinked right after it is opened
//	tree.json        TreeRecord: where the run's processes are (written
//	                 before each step starts)
//	exit.json.tmp    space held for the exit record (ReserveFile), so a
//	                 disk the run fills cannot keep its end from being
//	                 recorded: the record is written into it (truncated
//	                 first), then renamed to exit.json
const (
	SpecFile    = "spec.json"
	PidFile     = "supervisor.json"
	SuperLog    = "supervisor.log"
	StopFile    = "stop.json"
	ExitFile    = "exit.json"
	StdinFile   = "stdin"
	TreeFile    = "tree.json"
	ReserveFile = ExitFile + tmpSuffix
	DirMode     = 0o700
	SecretMode  = jsonfile.Mode
	tmpSuffix   = jsonfile.TmpSuffix
)

// PidsEnv is the environment variable that sets the daemon's default pids
// limit (a number, 0 for none); the supervisor names it when that default
// cannot be enforced.
const PidsEnv = "RUNBOX_DEFAULT_PIDS"

// Boot is what Start hands the supervisor (SpecFile): the spec plus
// backend options, with room for more without changing the argv.
type Boot struct {
	Spec          sandbox.Spec `json:"spec"`
	ForceWatchdog bool         `json:"force_watchdog,omitempty"`
	// PidsDefault says Spec.Limits.Pids is the backend's default, not
	// one the run asked for (the run's log says which).
	PidsDefault bool `json:"pids_default,omitempty"`
	NoCgroup    bool `json:"no_cgroup,omitempty"`
}

// PidRecord identifies the supervisor (PidFile). Start is the kernel's
// start time of the process, so a recycled pid is not mistaken for it.
type PidRecord struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// StopRequest is written by Stop (StopFile) before it signals the
// supervisor.
type StopRequest struct {
	Grace time.Duration `json:"grace"`
}

// The supervisor's messages on its ready pipe, one line each: the run is
// under way (ReadyMsg); its exit record is on disk (ExitedMsg, or the
// message Exited makes, which carries the record itself); a standby can
// serve another run (IdleMsg).
const (
	ReadyMsg   = "ok\n"
	ExitedMsg  = exitedWord + "\n"
	IdleMsg    = "idle\n"
	exitedWord = "exited"
)

// Exited is the message that hands the starter a run's exit record
// ("exited RECORD"). ok is false when the record cannot go on one line;
// the supervisor then says ExitedMsg once the record's file is in place.
func Exited(record []byte) (msg []byte, ok bool) {
	if len(record) == 0 || strings.ContainsRune(string(record), '\n') {
		return nil, false
	}
	msg = make([]byte, 0, len(exitedWord)+len(record)+2)
	msg = append(msg, exitedWord+" "...)
	msg = append(msg, record...)
	return append(msg, '\n'), true
}

// ParseExited reads an end-of-run message. ok reports whether msg is one
// (ExitedMsg or Exited's); exit is the record it carried, nil when it
// carried none or one that does not decode (the record on disk is then
// the one to read).
func ParseExited(msg string) (exit *sandbox.Exit, ok bool) {
	rec, ok := strings.CutPrefix(msg, exitedWord)
	if !ok || !strings.HasSuffix(rec, "\n") || (rec != "\n" && rec[0] != ' ') {
		return nil, false
	}
	if rec = strings.TrimSpace(rec); rec != "" {
		var e sandbox.Exit
		if json.Unmarshal([]byte(rec), &e) == nil {
			exit = &e
		}
	}
	return exit, true
}

// RunMsg is the line that hands a standby the run in stateDir on its
// control pipe.
func RunMsg(stateDir string) string { return stateDir + "\n" }

// ParseRunMsg reads a line of the control pipe; ok is false for anything
// but a run's state directory.
func ParseRunMsg(line string) (stateDir string, ok bool) {
	stateDir, ok = strings.CutSuffix(line, "\n")
	if !ok || stateDir == "" || strings.ContainsRune(stateDir, '\n') {
		return "", false
	}
	return stateDir, true
}

// The state dir's records are written and read as package jsonfile does.
var (
	WriteJSON = jsonfile.Write
	WriteTemp = jsonfile.WriteTemp
	ReadJSON  = jsonfile.Read
	// ReplaceJSON is for a record rewritten in place (TreeFile).
	ReplaceJSON = jsonfile.Replace
)

// ReadSpec reads the run's spec in stateDir: os.ErrNotExist when there is
// none, or a supervisor has taken it (DropSpec).
func ReadSpec(stateDir string, b *Boot) error {
	return jsonfile.ReadHeld(filepath.Join(stateDir, SpecFile), b)
}

// HasSpec reports whether stateDir holds a spec no supervisor has taken.
func HasSpec(stateDir string) bool { return jsonfile.Held(filepath.Join(stateDir, SpecFile)) }

// DropSpec empties the spec once the supervisor has read it: it may hold
// secrets (env, stdin). Emptied, not removed (jsonfile.Empty says why).
func DropSpec(stateDir string) { jsonfile.Empty(filepath.Join(stateDir, SpecFile)) }

// ReadExit returns the exit record in stateDir; os.ErrNotExist when there
// is none yet.
func ReadExit(stateDir string) (sandbox.Exit, error) {
	var e sandbox.Exit
	err := ReadJSON(filepath.Join(stateDir, ExitFile), &e)
	return e, err
}

// Exists reports whether path exists (as a file, directory or link).
func Exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// TreeRecord is how the daemon finds a run's processes when its
// supervisor is gone (TreeFile): they are killed then, since nothing
// else ever would. Written before each step's child starts.
//
// Sid is the supervisor's session (its pid: Start execs it with setsid),
// 0 when it is not a session leader; Start is the supervisor's start
// time, so a process older than it, or a recycled session id, is never
// taken for the run's. Groups are the steps' process groups (each step's
// first process leads its own). Cgroups are the run's cgroup directories:
// whatever they hold is the run's, however it left session and group.
type TreeRecord struct {
	Sid     int         `json:"sid,omitempty"`
	Start   uint64      `json:"start"`
	Groups  []PidRecord `json:"groups,omitempty"`
	Cgroups []string    `json:"cgroups,omitempty"`
}
