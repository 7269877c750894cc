package slurm

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/runbox/runbox/internal/jsonfile"
	"github.com/runbox/runbox/sandbox"
)

// record is the run's submit record in its state dir. It is written (and
// synced) before sbatch runs, so a daemon killed while sbatch answers
// leaves a record that says a job named after the run may exist: the next
// daemon finds it by that name instead of submitting a second one.
type record struct {
	RunID      string    `json:"run_id"`
	JobName    string    `json:"job_name"`
	Submitting time.Time `json:"submitting"`
	JobID      int64     `json:"job_id,omitempty"`
	// Task is the run's task id in job array JobID (array.go); JobName
	// is then the array's name.
	Task *int `json:"array_task,omitempty"`
	// ArrayDir is the array's own dir (its script and output links),
	// removed once every task of the array has ended; Group is the runs'
	// group (a sweep) whose arrays go one after another (array.go).
	ArrayDir   string        `json:"array_dir,omitempty"`
	Group      string        `json:"array_group,omitempty"`
	StartedAt  time.Time     `json:"started_at,omitzero"`
	StopReason string        `json:"stop_reason,omitempty"` // cancelled | queue-timeout
	Exit       *sandbox.Exit `json:"exit,omitempty"`
}

const (
	stopCancelled    = "cancelled"
	stopQueueTimeout = "queue-timeout"
)

type recordFile struct {
	path string
	mu   sync.Mutex
	r    record
}

func loadRecord(dir string) (*recordFile, error) {
	rf := &recordFile{path: filepath.Join(dir, stateFile)}
	b, err := os.ReadFile(rf.path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: no submit record in %s", sandbox.ErrNotFound, dir)
	}
	if err != nil {
		return nil, fmt.Errorf("read submit record: %w", err)
	}
	if err := json.Unmarshal(b, &rf.r); err != nil {
		return nil, fmt.Errorf("read submit record %s: %w", rf.path, err)
	}
	return rf, nil
}

func (rf *recordFile) get() record {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	return rf.r
}

// update changes the record and writes it durably (temp file, fsync,
// rename) so that a crash leaves the old or the new one, never half.
func (rf *recordFile) update(fn func(*record)) error {
	rf.mu.Lock()
	defer rf.mu.Unlock()
	next := rf.r
	fn(&next)
	if err := jsonfile.WriteDurable(rf.path, &next); err != nil {
		return fmt.Errorf("write submit record: %w", err)
	}
	rf.r = next
	return nil
}
