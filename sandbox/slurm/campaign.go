package slurm

import (
	"context"
	"errors"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sandbox"
)

// What the daemon's campaigns hand to the cluster's own scheduler: a
// chain's next run (sbatch --dependency) and a sweep's members (one job
// array, array.go). The engine asks for these by capability
// (sandbox.Chainer, sandbox.Grouper); it does not know they are Slurm's.

var (
	_ sandbox.Chainer = (*Sandbox)(nil)
	_ sandbox.Grouper = (*Sandbox)(nil)
)

// ChainAfter holds a job with --dependency=afterok (afterany with anyEnd)
// on the jobs or array tasks that refs name ("slurm:123", "slurm:123_4"),
// so the cluster starts it the moment they end, with no round trip
// through the daemon. Slurm itself would leave it pending forever if one
// of them failed under afterok (DependencyNeverSatisfied) unless the
// cluster sets kill_invalid_depend: the daemon cancels it then.
func (s *Sandbox) ChainAfter(refs []string, anyEnd bool) func(*sandbox.Spec) {
	if len(refs) == 0 {
		return nil
	}
	jobs := make([]string, 0, len(refs))
	for _, ref := range refs {
		job, ok := strings.CutPrefix(ref, "slurm:")
		if !ok || job == "" {
			return nil
		}
		jobs = append(jobs, job)
	}
	dep := "afterok:"
	if anyEnd {
		dep = "afterany:"
	}
	dep += strings.Join(jobs, ":")
	return func(spec *sandbox.Spec) {
		sl := ownSlurm(spec)
		sl.Options = maps.Clone(sl.Options)
		if sl.Options == nil {
			sl.Options = map[string]string{}
		}
		sl.Options["dependency"] = dep
	}
}

// Group makes the run one task of its group's job array (array.go).
func (s *Sandbox) Group(spec *sandbox.Spec, g sandbox.Group) {
	ownSlurm(spec).Array = &g
}

// ownSlurm gives spec a copy of its Slurm options of its own to change,
// and returns it: the stored spec is not changed.
func ownSlurm(spec *sandbox.Spec) *sandbox.SlurmSpec {
	sl := sandbox.SlurmSpec{}
	if spec.Slurm != nil {
		sl = *spec.Slurm
	}
	spec.Slurm = &sl
	return &sl
}

// GroupName: a group is one job array (split into arrays of at most the
// cluster's MaxArraySize, chained).
func (s *Sandbox) GroupName() string { return "Slurm job array" }

// StopGroups cancels the job arrays of the tasks refs name, one scancel
// each, the newest array first: a sweep's arrays go one after another
// (afterany), and cancelling an older one first would let the next start
// for a moment. A ref that is not an array task is left to the caller.
func (s *Sandbox) StopGroups(ctx context.Context, refs []string) error {
	seen := map[int64]bool{}
	var arrays []int64
	for _, ref := range refs {
		id := arrayJob(ref)
		if id <= 0 || seen[id] {
			continue
		}
		seen[id] = true
		arrays = append(arrays, id)
	}
	sort.Slice(arrays, func(i, j int) bool { return arrays[i] > arrays[j] })
	var errs []error
	for _, id := range arrays {
		if err := s.stopArray(ctx, id); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// arrayJob is the array's job id of task ref "slurm:123_4"; 0 when ref is
// not an array task.
func arrayJob(ref string) int64 {
	job, ok := strings.CutPrefix(ref, "slurm:")
	if !ok {
		return 0
	}
	a, _, isTask := strings.Cut(job, "_")
	if !isTask {
		return 0
	}
	n, err := strconv.ParseInt(a, 10, 64)
	if err != nil {
		return 0
	}
	return n
}
