package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// Job arrays: a sweep's members go to Slurm as one sbatch --array=0-N%P,
// so the cluster, not the daemon, holds them to the sweep's parallelism
// and shows them as one job. Each member is still its own run with its
// own state dir, batch script, 0600 env file and submit record; only the
// submission is shared. The array's batch script picks the member's own
// script by SLURM_ARRAY_TASK_ID, and the array's per-task output files
// (--output=DIR/%a.out) are links to the member's job.out and job.err,
// which its handle follows as for a job of its own. A member's handle
// watches task ARRAY_INDEX (scancel, scontrol, sacct and --dependency
// all take that form), so stopping one member cancels only its task.

// arrayGather is how long an array waits for a member still to come
// after the last one joined: a member whose run ended before it reached
// Start (stopped, failed to prepare) does not hold the others forever;
// the array goes without it.
const arrayGather = 5 * time.Second

// arrayFile is the array's batch script in its dir.
const arrayFile = "array.sh"

// arrayOf is the spec's place in a job array, nil for a job of its own.
func arrayOf(spec sandbox.Spec) *sandbox.Group {
	if spec.Slurm == nil || spec.Slurm.Array == nil {
		return nil
	}
	return spec.Slurm.Array
}

// arrayName is the job name of array key (a job id Slurm reuses carries
// another name and is never taken for it).
func arrayName(key string) string { return "runbox-array-" + key }

// arrayMember is one run waiting in a batch for the array's sbatch.
type arrayMember struct {
	spec sandbox.Spec
	args []string // its own sbatch options (sbatchArgs)
	env  []string // sbatch's own environment (splitEnv)
	rec  *recordFile
	// Set by submitArray: the member's array (chunk) and task, or err.
	id   int64
	task int
	err  error
}

// arrayBatch gathers the members of one array until all have come.
type arrayBatch struct {
	a       sandbox.Group
	members []*arrayMember
	timer   *time.Timer
	done    chan struct{} // closed once sbatch answered
}

// joinArray adds a member to its array and blocks until the array is
// submitted (all its members joined, or arrayGather passed without a new
// one); it returns the job id of the array the member's task is in (its
// task id is then in its submit record).
func (s *Sandbox) joinArray(m *arrayMember) (int64, error) {
	a := *arrayOf(m.spec)
	s.arrMu.Lock()
	if s.batches == nil {
		s.batches = map[string]*arrayBatch{}
	}
	b := s.batches[a.Key]
	if b == nil {
		b = &arrayBatch{a: a, done: make(chan struct{})}
		s.batches[a.Key] = b
	}
	b.members = append(b.members, m)
	if len(b.members) >= b.a.Size {
		delete(s.batches, a.Key)
		if b.timer != nil {
			b.timer.Stop()
		}
		go s.submitArray(b)
	} else if b.timer == nil {
		b.timer = time.AfterFunc(arrayGather, func() {
			s.arrMu.Lock()
			mine := s.batches[a.Key] == b
			if mine {
				delete(s.batches, a.Key)
			}
			s.arrMu.Unlock()
			if mine {
				s.submitArray(b)
			}
		})
	} else {
		b.timer.Reset(arrayGather)
	}
	s.arrMu.Unlock()
	<-b.done // bounded: arrayGather, then one sbatch per chunk (cmdTimeout)
	return m.id, m.err
}

// submitArray submits the batch as job arrays of at most MaxArraySize
// tasks each (chunks, task ids 0..k-1 in each), every one after the
// arrays of its group still live (afterany), so that the group's
// Parallel holds across them all.
func (s *Sandbox) submitArray(b *arrayBatch) {
	defer close(b.done)
	// One submission at a time: an array's dependencies are the arrays
	// of its group submitted before it.
	s.subMu.Lock()
	defer s.subMu.Unlock()
	ctx := context.Background()
	ms := slices.Clone(b.members)
	sort.Slice(ms, func(i, j int) bool { return arrayOf(ms[i].spec).Index < arrayOf(ms[j].spec).Index })
	fail := func(ms []*arrayMember, err error) {
		for _, m := range ms {
			m.err = fmt.Errorf("sbatch refused the job array: %w", err)
		}
	}
	args := sharedArgs(ms[0].args)
	for i, m := range ms {
		if i > 0 && arrayOf(m.spec).Index == arrayOf(ms[i-1].spec).Index {
			fail(ms, fmt.Errorf("two runs are member %d of array %s", arrayOf(m.spec).Index, b.a.Key))
			return
		}
		if !slices.Equal(sharedArgs(m.args), args) {
			fail(ms, fmt.Errorf("run %s asks Slurm for other resources than run %s: one array takes one set of sbatch options", m.spec.RunID, ms[0].spec.RunID))
			return
		}
	}
	group := b.a.Sweep
	deps := s.liveArrays(group)
	size := s.maxArray(ctx)
	for c, lo := 0, 0; lo < len(ms); c, lo = c+1, lo+size {
		part := ms[lo:min(lo+size, len(ms))]
		name, dir := arrayName(b.a.Key), b.a.Dir
		if c > 0 {
			name, dir = fmt.Sprintf("%s-c%d", name, c), fmt.Sprintf("%s-c%d", dir, c)
		}
		id, err := s.sbatchArray(ctx, name, dir, group, part, args, deps, b.a.Parallel)
		if err != nil {
			removeArrayDir(dir)
			fail(ms[lo:], err) // the chunks after it would have followed it
			return
		}
		s.addArray(id, group, dir, len(part))
		for _, m := range part {
			m.id = id
		}
		deps = append(deps, id)
	}
}

// sbatchArray submits members ms as one job array named name, tasks
// 0..len(ms)-1 in that order, after the arrays deps (afterany).
func (s *Sandbox) sbatchArray(ctx context.Context, name, dir, group string, ms []*arrayMember, args []string, deps []int64, parallel int) (int64, error) {
	// Each member's record names its array and task before sbatch runs:
	// a daemon killed while it answers finds the task by them. The
	// records are synced a few at a time (thousands of members).
	var (
		wg   sync.WaitGroup
		errs = make([]error, len(ms))
		sem  = make(chan struct{}, 16)
	)
	for i, m := range ms {
		m.task = i
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = m.rec.update(func(r *record) {
				r.JobName, r.Task, r.ArrayDir, r.Group = name, &m.task, dir, group
			})
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, fmt.Errorf("create array dir: %w", err)
	}
	stdin := ms[0].spec.StdinFile != "" || len(ms[0].spec.Stdin) > 0
	tasks := make([]int, len(ms))
	for i, m := range ms {
		t := m.task
		tasks[i] = t
		links := map[string]string{
			strconv.Itoa(t) + ".out": filepath.Join(m.spec.StateDir, stdoutFile),
			strconv.Itoa(t) + ".err": filepath.Join(m.spec.StateDir, stderrFile),
		}
		if stdin {
			in := m.spec.StdinFile
			if in == "" {
				in = filepath.Join(m.spec.StateDir, stdinFile)
			}
			links[strconv.Itoa(t)+".in"] = in
		}
		for name, target := range links {
			p := filepath.Join(dir, name)
			_ = os.Remove(p)
			if err := os.Symlink(target, p); err != nil {
				return 0, fmt.Errorf("link task output: %w", err)
			}
		}
	}
	script := filepath.Join(dir, arrayFile)
	if err := os.WriteFile(script, []byte(arrayScript(name, ms)), 0o700); err != nil {
		return 0, fmt.Errorf("write array script: %w", err)
	}
	// Slurm enters --chdir before the script runs, for every task: the
	// array's own dir lives as long as the array (a member's workdir, a
	// sweep member's snapshot, is removed when that member ends, and a
	// later task would log "couldn't chdir"); the script then enters each
	// task's own workdir.
	args = withAfterAny(slices.Clone(args), deps)
	args = append(args,
		"--job-name="+name,
		"--comment=runbox:array:"+strings.TrimPrefix(name, "runbox-array-"),
		"--chdir="+dir,
		"--output="+filepath.Join(dir, "%a.out"),
		"--error="+filepath.Join(dir, "%a.err"),
		"--array="+arraySpec(tasks, parallel))
	if stdin {
		args = append(args, "--input="+filepath.Join(dir, "%a.in"))
	}
	out, err := s.commandEnv(ctx, withSlurmConf(ms[0].env), nil, "sbatch", append(args, script)...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if j, ok := s.findByName(ctx, name, tasks[0]); ok {
				return j.ID, nil
			}
		}
		return 0, err
	}
	f, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	id, perr := strconv.ParseInt(f, 10, 64)
	if perr != nil {
		return 0, fmt.Errorf("sbatch answered %q, not a job id", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// perRun are the sbatch options that name one run (its name, files,
// directory): the array sets its own.
var perRun = []string{"--job-name=", "--comment=", "--chdir=", "--output=", "--error=", "--input="}

// sharedArgs is a member's sbatch options less the per-run ones.
func sharedArgs(args []string) []string {
	out := make([]string, 0, len(args))
	for _, a := range args {
		if !slices.ContainsFunc(perRun, func(p string) bool { return strings.HasPrefix(a, p) }) {
			out = append(out, a)
		}
	}
	return out
}

// arrayScript is the array's batch script: task N goes to member N's
// directory and execs its own batch script (which sources its own env
// file). It holds paths only, no env values.
func arrayScript(name string, ms []*arrayMember) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# " + name + " (generated): each task runs its member's own " + scriptFile + "\n")
	b.WriteString("case \"$SLURM_ARRAY_TASK_ID\" in\n")
	for _, m := range ms {
		fmt.Fprintf(&b, "%d) cd %s && exec %s ;;\n", m.task, quote(m.spec.Workdir), quote(filepath.Join(m.spec.StateDir, scriptFile)))
	}
	b.WriteString("*) echo \"runbox: no run for array task $SLURM_ARRAY_TASK_ID\" >&2; exit 125 ;;\nesac\n")
	b.WriteString("echo \"runbox: cannot enter the run's directory\" >&2\nexit 125\n")
	return b.String()
}

// arraySpec is --array's value: the task ids as ranges ("0-3", "0,2-5"),
// then %P when it caps anything.
func arraySpec(tasks []int, parallel int) string {
	var parts []string
	for i := 0; i < len(tasks); {
		j := i
		for j+1 < len(tasks) && tasks[j+1] == tasks[j]+1 {
			j++
		}
		if j == i {
			parts = append(parts, strconv.Itoa(tasks[i]))
		} else {
			parts = append(parts, strconv.Itoa(tasks[i])+"-"+strconv.Itoa(tasks[j]))
		}
		i = j + 1
	}
	s := strings.Join(parts, ",")
	if parallel > 0 && parallel < len(tasks) {
		s += "%" + strconv.Itoa(parallel)
	}
	return s
}

// trackTask and untrackTask keep the live handles of each array, for
// stopArray.
func (s *Sandbox) trackTask(h *handle) {
	s.arrMu.Lock()
	defer s.arrMu.Unlock()
	if s.stopped[h.jobID] {
		// stopArray ran while this task's run was being started: it was
		// cancelled with the array, by runbox.
		h.rec.update(func(r *record) {
			if r.StopReason == "" {
				r.StopReason = stopCancelled
			}
		})
		h.arrayStopped = true
	}
	if s.tasks == nil {
		s.tasks = map[int64]map[*handle]struct{}{}
	}
	if s.tasks[h.jobID] == nil {
		s.tasks[h.jobID] = map[*handle]struct{}{}
	}
	s.tasks[h.jobID][h] = struct{}{}
	s.arrayTrackedLocked(h)
}

// untrackTask is called once the task's exit is recorded.
func (s *Sandbox) untrackTask(h *handle) {
	s.arrMu.Lock()
	delete(s.tasks[h.jobID], h)
	if len(s.tasks[h.jobID]) == 0 {
		delete(s.tasks, h.jobID)
	}
	s.arrMu.Unlock()
	s.arrayMaybeEnded(h.jobID)
}

// stopArray cancels job array id with one scancel (StopGroups): every
// task this process follows is marked stopped by runbox first, so each
// run ends cancelled, not "cancelled outside runbox".
func (s *Sandbox) stopArray(ctx context.Context, id int64) error {
	s.arrMu.Lock()
	if s.stopped == nil {
		s.stopped = map[int64]bool{}
	}
	s.stopped[id] = true
	var hs []*handle
	for h := range s.tasks[id] {
		hs = append(hs, h)
	}
	s.arrMu.Unlock()
	for _, h := range hs {
		select {
		case <-h.done:
			continue
		default:
		}
		if err := h.rec.update(func(r *record) {
			if r.StopReason == "" {
				r.StopReason = stopCancelled
			}
		}); err != nil {
			return err
		}
		h.mu.Lock()
		h.arrayStopped = true
		h.mu.Unlock()
	}
	_, err := s.command(ctx, "scancel", strconv.FormatInt(id, 10))
	for _, h := range hs {
		h.stopOnce.Do(func() { close(h.stopSignal) })
	}
	if err != nil {
		return fmt.Errorf("scancel job array %d: %w", id, err)
	}
	return nil
}
