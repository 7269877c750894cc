package process

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// Files in Spec.StateDir. The directory is private to one run (0700).
//
//	spec.json        bootstrap written by Start (0600); the supervisor removes
//	                 it as soon as it has read it, so env secrets do not stay on disk
//	supervisor.json  pid + start time of the supervisor (written before the child starts)
//	supervisor.log   the supervisor's own stderr (panics, failures to open the log)
//	stop.json        a stop request (grace); the supervisor reads it on SIGTERM
//	exit.json        the exit record, written last and atomically
const (
	specFile   = "spec.json"
	pidFile    = "supervisor.json"
	superLog   = "supervisor.log"
	stopFile   = "stop.json"
	exitFile   = "exit.json"
	stdinFile  = "stdin" // unlinked right after it is opened
	tmpSuffix  = ".tmp"
	dirMode    = 0o700
	secretMode = 0o600
)

// boot is what Start hands the supervisor: the spec plus backend options,
// with room for more without changing the supervisor's argv.
type boot struct {
	Spec          sandbox.Spec `json:"spec"`
	ForceWatchdog bool         `json:"force_watchdog,omitempty"`
}

// pidRecord identifies the supervisor. Start is the kernel's start time of
// the process, so a recycled pid is not mistaken for it.
type pidRecord struct {
	Pid   int    `json:"pid"`
	Start uint64 `json:"start"`
}

// stopRequest is written by Stop before it signals the supervisor.
type stopRequest struct {
	Grace time.Duration `json:"grace"`
}

// writeFileAtomic writes data to path via a temporary file and a rename,
// so readers see no file or the whole new one; with sync the data is on
// disk before the rename. (The directory is not synced: a crash may lose
// the rename, never expose a torn file.)
func writeFileAtomic(path string, data []byte, sync bool) error {
	commit, err := writeTemp(path, data, sync)
	if err != nil {
		return err
	}
	return commit()
}

// writeTemp writes path's temporary twin; commit renames it into place.
func writeTemp(path string, data []byte, sync bool) (commit func() error, err error) {
	tmp := path + tmpSuffix
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, secretMode)
	if err != nil {
		return nil, err
	}
	_, werr := f.Write(data)
	var serr error
	if sync {
		serr = f.Sync()
	}
	cerr := f.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp)
		return nil, err
	}
	return func() error {
		if err := os.Rename(tmp, path); err != nil {
			os.Remove(tmp)
			return err
		}
		return nil
	}, nil
}

func writeJSON(path string, v any, sync bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeFileAtomic(path, b, sync)
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("decode %s: %w", filepath.Base(path), err)
	}
	return nil
}

// readExit returns the exit record; os.ErrNotExist when there is none yet.
func readExit(stateDir string) (sandbox.Exit, error) {
	var e sandbox.Exit
	err := readJSON(filepath.Join(stateDir, exitFile), &e)
	return e, err
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}
