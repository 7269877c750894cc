package slurm

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The life of a job array beyond its sbatch (array.go): how many tasks
// one array may hold (the cluster's MaxArraySize), which arrays of a
// group are still live (a later array of the group goes after them, so
// the group's %P holds across arrays), and the removal of an array's own
// dir once every task of it has ended.

// defaultMaxArray is Slurm's own default MaxArraySize, used while the
// controller does not say (an answer is asked again next time).
const defaultMaxArray = 1001

// maxArrayEnv overrides the cluster's MaxArraySize (tests split a small
// sweep into arrays of 2 with it; a value above the cluster's is refused
// by sbatch).
const maxArrayEnv = "RUNBOX_SLURM_MAX_ARRAY"

// maxArray is how many tasks one job array may hold: task ids run
// 0..MaxArraySize-1.
// Options.MaxArray or $RUNBOX_SLURM_MAX_ARRAY lower it, never raise it.
func (s *Sandbox) maxArray(ctx context.Context) int {
	n := s.clusterMaxArray(ctx)
	if s.opts.MaxArray > 0 {
		return min(n, s.opts.MaxArray)
	}
	if v, err := strconv.Atoi(os.Getenv(maxArrayEnv)); err == nil && v > 0 {
		return min(n, v)
	}
	return n
}

// clusterMaxArray is the cluster's MaxArraySize, read once.
func (s *Sandbox) clusterMaxArray(ctx context.Context) int {
	s.cgMu.Lock()
	defer s.cgMu.Unlock()
	if s.maxKnown {
		return s.maxArr
	}
	out, err := s.command(ctx, "scontrol", "show", "config")
	if err != nil {
		return defaultMaxArray
	}
	n, ok := parseMaxArraySize(string(out))
	if !ok {
		return defaultMaxArray
	}
	s.maxKnown, s.maxArr = true, n
	return n
}

// parseMaxArraySize reads MaxArraySize from `scontrol show config`; a
// cluster with arrays disabled (0) still gets arrays of one task, which
// its sbatch refuses with its own message.
func parseMaxArraySize(conf string) (int, bool) {
	for _, line := range strings.Split(conf, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), "MaxArraySize") {
			continue
		}
		n, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || n < 0 {
			return 0, false
		}
		return max(n, 1), true
	}
	return 0, false
}

// withAfterAny adds afterany on arrays deps to sbatch options args,
// joined (",": all of them) to a --dependency the run already has.
func withAfterAny(args []string, deps []int64) []string {
	if len(deps) == 0 {
		return args
	}
	ids := make([]string, len(deps))
	for i, d := range deps {
		ids[i] = strconv.FormatInt(d, 10)
	}
	dep := "afterany:" + strings.Join(ids, ":")
	for i, a := range args {
		if v, ok := strings.CutPrefix(a, "--dependency="); ok && v != "" {
			args[i] = "--dependency=" + v + "," + dep
			return args
		}
	}
	return append(args, "--dependency="+dep)
}

// liveArray is an array some of whose tasks may not have ended.
type liveArray struct {
	group, dir string
	// waiting counts the members submitted whose handle is not yet
	// tracked: the array is live until they are, whatever tasks end.
	waiting int
}

// addArray records array id of group, just submitted with n members.
func (s *Sandbox) addArray(id int64, group, dir string, n int) {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	if s.arrays == nil {
		s.arrays = map[int64]*liveArray{}
	}
	s.arrays[id] = &liveArray{group: group, dir: dir, waiting: n}
}

// liveArrays are the arrays of group not yet ended, oldest first.
func (s *Sandbox) liveArrays(group string) []int64 {
	if group == "" {
		return nil
	}
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	var ids []int64
	for id, a := range s.arrays {
		if a.group == group {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids
}

// arrayTracked notes that a handle follows a task of array id (a
// recovered one registers the array from its record). Called with
// s.arrMu held.
func (s *Sandbox) arrayTrackedLocked(h *handle) {
	if s.arrays == nil {
		s.arrays = map[int64]*liveArray{}
	}
	a := s.arrays[h.jobID]
	if a == nil {
		r := h.rec.get()
		s.arrays[h.jobID] = &liveArray{group: r.Group, dir: r.ArrayDir}
		return
	}
	if a.waiting > 0 {
		a.waiting--
	}
}

// memberGone is a member submitted in array id whose handle will never
// be tracked (its Start failed after sbatch).
func (s *Sandbox) memberGone(id int64) {
	s.arrMu.Lock()
	a := s.arrays[id]
	if a != nil && a.waiting > 0 {
		a.waiting--
	}
	s.arrMu.Unlock()
	s.arrayMaybeEnded(id)
}

// arrayMaybeEnded is called when a task of array id ended and its exit
// was recorded: once no task of it is followed or awaited here, it is no
// longer a dependency of its group's next array, and its dir goes once
// Slurm confirms no task of it is left.
func (s *Sandbox) arrayMaybeEnded(id int64) {
	s.arrMu.Lock()
	a := s.arrays[id]
	if a == nil || a.waiting > 0 || len(s.tasks[id]) > 0 {
		s.arrMu.Unlock()
		return
	}
	delete(s.arrays, id)
	s.arrMu.Unlock()
	if a.dir != "" {
		go s.reapArray(id, a.dir)
	}
}

// reapTries and reapEvery bound how long an array's dir waits for tasks
// this process does not follow (a daemon still recovering them).
const (
	reapTries = 12
	reapEvery = 5 * time.Second
)

// reapArray removes the dir of array id once Slurm lists no live task of
// it. A task this process follows again meanwhile reaps it itself.
func (s *Sandbox) reapArray(id int64, dir string) {
	s.arrMu.Lock()
	if s.reaped == nil {
		s.reaped = map[int64]bool{}
	}
	if s.reaped[id] {
		s.arrMu.Unlock()
		return
	}
	s.reaped[id] = true
	s.arrMu.Unlock()
	for range reapTries {
		s.arrMu.Lock()
		followed := len(s.tasks[id]) > 0
		if followed {
			delete(s.reaped, id) // its last task's end reaps it
		}
		s.arrMu.Unlock()
		if followed {
			return
		}
		live, err := s.arrayLive(context.Background(), id)
		if err == nil && !live {
			removeArrayDir(dir)
			return
		}
		time.Sleep(reapEvery)
	}
	s.arrMu.Lock()
	delete(s.reaped, id)
	s.arrMu.Unlock()
}

// arrayLive reports whether squeue lists a task of array id not ended.
func (s *Sandbox) arrayLive(ctx context.Context, id int64) (bool, error) {
	out, err := s.command(ctx, "squeue", "-h", "-r", "-j", strconv.FormatInt(id, 10), "-o", "%T")
	if err != nil {
		if strings.Contains(err.Error(), "Invalid job id") {
			return false, nil // purged: long ended
		}
		return false, err
	}
	for _, st := range strings.Fields(string(out)) {
		// COMPLETING: the task's step ended and its output is closed.
		if !terminal[st] && st != "COMPLETING" {
			return true, nil
		}
	}
	return false, nil
}

// taskLink is an array's per-task output link (array.go).
var taskLink = regexp.MustCompile(`^[0-9]+\.(out|err|in)$`)

// removeArrayDir removes what the array put in dir (its script, the
// links to its members' files) and then dir if that left it empty;
// never a member's own file (the links' targets), nor anything else.
func removeArrayDir(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		switch {
		case e.Name() == arrayFile && e.Type().IsRegular():
			os.Remove(p)
		case taskLink.MatchString(e.Name()) && e.Type()&os.ModeSymlink != 0:
			os.Remove(p) // the link, not its target
		}
	}
	os.Remove(dir)
}

// reapRecovered looks at the dir of an array task that had ended before
// this process saw it (a daemon killed after the exit record, before the
// dir went).
func (s *Sandbox) reapRecovered(r record) {
	if r.ArrayDir == "" || r.JobID == 0 || r.Task == nil {
		return
	}
	s.arrMu.Lock()
	_, live := s.arrays[r.JobID]
	s.arrMu.Unlock()
	if !live {
		go s.reapArray(r.JobID, r.ArrayDir)
	}
}
