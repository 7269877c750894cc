package docker

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/runbox/runbox/sandbox"
)

// stateFile is the backend's own record of a run, kept in Spec.StateDir so
// that a restarted daemon knows what the container alone cannot tell it:
// which container and box serve the run, why it was stopped, and the
// final exit once the container is gone.
const stateFile = "docker.json"

// Stop reasons.
const (
	reasonCancelled = "cancelled"
	reasonTimedOut  = "timed_out"
)

type runState struct {
	ContainerID string `json:"container_id"`
	// Box is the host directory mounted at BoxMount: the run's own
	// (StateDir/box) or a pooled container's, which goes with the run.
	Box        string        `json:"box,omitempty"`
	Pooled     bool          `json:"pooled,omitempty"`
	StopReason string        `json:"stop_reason,omitempty"`
	Exit       *sandbox.Exit `json:"exit,omitempty"`
}

// state guards a runState and writes it through to disk (when the run
// has a state dir) with write-and-rename, so a crash leaves the old or the
// new record, never half of one.
type state struct {
	mu   sync.Mutex
	dir  string
	data runState
}

func loadState(dir string) (*state, error) {
	s := &state{dir: dir}
	if dir == "" {
		return s, nil
	}
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read run state: %w", err)
	}
	if err := json.Unmarshal(b, &s.data); err != nil {
		return nil, fmt.Errorf("read run state: %w", err)
	}
	return s, nil
}

func (s *state) get() runState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.data
}

// update applies fn and saves the result.
func (s *state) update(fn func(*runState)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	fn(&s.data)
	if s.dir == "" {
		return nil
	}
	b, err := json.MarshalIndent(s.data, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	tmp, err := os.CreateTemp(s.dir, stateFile+".tmp*")
	if err != nil {
		return fmt.Errorf("save run state: %w", err)
	}
	_, werr := tmp.Write(b)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save run state: %w", err)
	}
	if err := os.Rename(tmp.Name(), filepath.Join(s.dir, stateFile)); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("save run state: %w", err)
	}
	return nil
}
