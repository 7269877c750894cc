package cli

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// maxPids is the most a pids limit can be: the kernel's PID_MAX_LIMIT
// (4194304); pids.max refuses more, and a refusal read later looked like
// a missing pids controller.
const maxPids = 4 << 20

// errNoRunID is the usage error for an empty run id: without it,
// `runbox logs ""` asked for /v1/runs//logs and was told run "logs" was
// not found.
var errNoRunID = errors.New(`a run id is required (runbox ls lists them)`)

func needRunID(id string) error {
	if strings.TrimSpace(id) == "" {
		return errNoRunID
	}
	return nil
}

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
