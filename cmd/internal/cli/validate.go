package cli

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/runbox/runbox/api"
)

// maxPids is the most a pids limit can be: the kernel's PID_MAX_LIMIT
// (4194304); pids.max refuses more, and a refusal read later looked like
// a missing pids controller.
const maxPids = 4 << 20

// errNoRunID is the usage error for an empty run id: without it,
// `runbox logs ""` asked for /v1/runs//logs and was told run "logs" was
// not found.
var errNoRunID = errors.New(`a run id is required (runbox ls lists them)`)

func needRunID(id string) error { return needID(id, errNoRunID) }

// Validate: see needRunID (kong calls it while parsing: exit 2).
func (c *StatusCmd) Validate() error { return needRunID(c.ID) }

// Validate: see needRunID.
func (c *WaitCmd) Validate() error { return needRunID(c.ID) }

// Validate: see needRunID.
func (c *StopCmd) Validate() error { return needRunID(c.ID) }

// Validate: see needRunID.
func (c *LogsCmd) Validate() error {
	if c.TailBytes < -1 {
		return fmt.Errorf("--tail-bytes %d: want a byte count (0 for no bound)", c.TailBytes)
	}
	return needRunID(c.ID)
}

// Validate: see needRunID.
func (c *RetryCmd) Validate() error { return needRunID(c.ID) }

// Validate: see needRunID.
func (c *PlotCmd) Validate() error {
	if len(c.Runs) == 0 {
		return errNoRunID
	}
	for _, id := range c.Runs {
		if err := needRunID(id); err != nil {
			return err
		}
	}
	return nil
}

// checkCPUs refuses what no CPU limit can be: NaN passed `< 0` and
// reached the client's JSON encoder (exit 1, "unsupported value: NaN").
func checkCPUs(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("--cpus %g: want a positive number of CPUs, e.g. 1.5", v)
	}
	return nil
}

func checkPids(v int64) error {
	if v < 0 || v > maxPids {
		return fmt.Errorf("--pids %d: want a process count from 1 to %d (the kernel's limit)", v, maxPids)
	}
	return nil
}

// The commands below name what they need, as needRunID does, rather than
// kong's bare `expected "<run-a> <run-b>"` for a missing argument.

var (
	errTwoRuns   = errors.New(`two runs are required: runbox diff RUN_A RUN_B (runbox ls lists them; @last~1 @last are the newest two)`)
	errNoSweepID = errors.New(`a sweep id is required (runbox sweep ls lists them; @last is the newest)`)
	errNoPlanID  = errors.New(`a plan id is required (runbox plan -- CMD makes one and prints it)`)
)

func needID(id string, err error) error {
	if strings.TrimSpace(id) == "" {
		return err
	}
	return nil
}

// Validate: both runs are named.
func (c *DiffCmd) Validate() error { return cmp.Or(needID(c.A, errTwoRuns), needID(c.B, errTwoRuns)) }

// Validate: a sweep is named.
func (c *SweepStatusCmd) Validate() error { return needID(c.ID, errNoSweepID) }

// Validate: a sweep is named.
func (c *SweepWaitCmd) Validate() error { return needID(c.ID, errNoSweepID) }

// Validate: a sweep is named.
func (c *SweepStopCmd) Validate() error { return needID(c.ID, errNoSweepID) }

// Validate: a plan is named.
func (c *ExecCmd) Validate() error { return needID(c.Plan, errNoPlanID) }

// Validate refuses a state no run can be in, naming those there are:
// before, the daemon's "bad request: unknown state" exited 1.
func (c *LsCmd) Validate() error {
	for _, s := range c.State {
		for _, one := range strings.Split(s, ",") {
			if !slices.Contains(api.States, api.State(strings.TrimSpace(one))) {
				return fmt.Errorf("--state %q: a run's state is one of %s", one, stateNames())
			}
		}
	}
	return nil
}

func stateNames() string {
	names := make([]string, len(api.States))
	for i, s := range api.States {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}
