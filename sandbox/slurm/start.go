package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// Start writes the batch script and the submit record, submits the job
// and returns once Slurm has accepted it (it may still be PENDING; the
// handle is a sandbox.Queued).
func (s *Sandbox) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	if _, err := exec.LookPath("sbatch"); err != nil {
		return nil, fmt.Errorf("%w: %w", sandbox.ErrUnavailable, errNoSlurm)
	}
	args, err := sbatchArgs(spec)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(spec.StateDir, 0o700); err != nil {
		return nil, fmt.Errorf("create state dir: %w", err)
	}
	// The job runs as this user on a compute node: its files must be
	// reachable there (a shared filesystem) and writable by it.
	path := filepath.Join(spec.StateDir, scriptFile)
	if err := os.WriteFile(path, []byte(script(spec)), 0o700); err != nil {
		return nil, fmt.Errorf("write batch script: %w", err)
	}
	sbatchEnv, fileEnv := splitEnv(runEnv(spec))
	if err := writePrivate(filepath.Join(spec.StateDir, envFile), envScript(fileEnv)); err != nil {
		return nil, fmt.Errorf("write env file: %w", err)
	}
	if len(spec.Stdin) > 0 && spec.StdinFile == "" {
		if err := os.WriteFile(filepath.Join(spec.StateDir, stdinFile), spec.Stdin, 0o600); err != nil {
			return nil, fmt.Errorf("write stdin: %w", err)
		}
	}
	arr := arrayOf(spec)
	rf := &recordFile{path: filepath.Join(spec.StateDir, stateFile)}
	if err := rf.update(func(r *record) {
		*r = record{RunID: spec.RunID, JobName: jobName(spec.RunID), Submitting: time.Now()}
		if arr != nil {
			r.JobName, r.Task = arrayName(arr.Key), &arr.Index
		}
	}); err != nil {
		return nil, err
	}
	w, err := runlog.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	var id int64
	if arr != nil {
		// One task of a job array: submitted with the others (array.go).
		id, err = s.joinArray(&arrayMember{spec: spec, args: args, env: sbatchEnv, rec: rf})
	} else {
		id, err = s.submit(ctx, spec, sbatchEnv, args, path)
	}
	if err != nil {
		removeEnvFile(spec.StateDir)
		w.Close()
		rf.update(func(r *record) { r.Exit = &sandbox.Exit{Error: err.Error(), EndedAt: time.Now()} })
		return nil, err
	}
	if err := rf.update(func(r *record) { r.JobID = id }); err != nil {
		// The job runs but its id is not on disk: cancel rather than
		// leave a job the next daemon would have to find by name.
		what := strconv.FormatInt(id, 10)
		if t := rf.get().Task; arr != nil && t != nil {
			what = taskKey(id, *t) // only this run's task
		}
		s.command(context.WithoutCancel(ctx), "scancel", what)
		if arr != nil {
			s.memberGone(id)
		}
		w.Close()
		return nil, err
	}
	h := s.newHandle(spec, id, rf, w, runlog.Summary{})
	if arr != nil {
		w.Write(runlog.Meta, fmt.Appendf(nil, "slurm: submitted as task %d of job array %d\n", h.task, id))
	} else {
		w.Write(runlog.Meta, fmt.Appendf(nil, "slurm: submitted job %d\n", id))
	}
	go h.watch()
	return h, nil
}

// runEnv is the run's whole environment.
func runEnv(spec sandbox.Spec) []string {
	if !spec.CleanEnv {
		return append(os.Environ(), spec.Env...)
	}
	return spec.Env
}

// writePrivate writes b to a new 0600 file at p (an old one, from a
// Start that failed, is replaced: its mode may not be 0600).
func writePrivate(p string, b []byte) error {
	_ = os.Remove(p)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// removeEnvFile deletes the run's env file: the run has ended (or never
// started), and no attempt will read it again.
func removeEnvFile(stateDir string) { _ = os.Remove(filepath.Join(stateDir, envFile)) }

// submit runs sbatch with env (what configures Slurm; the rest of the
// run's env is in its env file) as sbatch's own environment, carried to
// the job by --export=ALL. When sbatch does not answer, the job may have
// been accepted all the same: it is looked for by name.
func (s *Sandbox) submit(ctx context.Context, spec sandbox.Spec, env []string, args []string, path string) (int64, error) {
	env = withSlurmConf(env)
	out, err := s.commandEnv(ctx, env, nil, "sbatch", append(args, path)...)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			if j, ok := s.findByName(context.WithoutCancel(ctx), jobName(spec.RunID), -1); ok {
				return j.ID, nil
			}
		}
		return 0, fmt.Errorf("sbatch refused the job: %w", err)
	}
	// --parsable prints "id" or "id;cluster".
	f, _, _ := strings.Cut(strings.TrimSpace(string(out)), ";")
	id, perr := strconv.ParseInt(f, 10, 64)
	if perr != nil {
		return 0, fmt.Errorf("sbatch answered %q, not a job id", strings.TrimSpace(string(out)))
	}
	return id, nil
}

// withSlurmConf keeps the daemon's SLURM_CONF (which cluster to talk to)
// when the run's env does not name one.
func withSlurmConf(env []string) []string {
	v, ok := os.LookupEnv("SLURM_CONF")
	if !ok {
		return env
	}
	for _, kv := range env {
		if strings.HasPrefix(kv, "SLURM_CONF=") {
			return env
		}
	}
	return append(env, "SLURM_CONF="+v)
}

// findByName finds the live job carrying name; task >= 0 finds that task
// of the array of that name (its ArrayID is the array's id).
func (s *Sandbox) findByName(ctx context.Context, name string, task int) (job, bool) {
	b, err := s.command(ctx, "squeue", "--json", "--me", "--states=all")
	if err != nil {
		return job{}, false
	}
	list, err := parseJobs(b)
	if err != nil {
		return job{}, false
	}
	var best job
	for _, j := range list {
		if j.Name != name || (task >= 0 && (j.ArrayID == 0 || j.Task != task)) {
			continue
		}
		if task >= 0 {
			j.ID = j.ArrayID
		}
		if j.ID > best.ID {
			best = j
		}
	}
	return best, best.ID != 0
}

// Recover re-attaches to a run whose daemon died: the job kept running
// and kept writing its output files; following resumes where the run log
// ends (its per-stream byte counts are the files' offsets), so nothing is
// lost or repeated.
func (s *Sandbox) Recover(ctx context.Context, spec sandbox.Spec) (sandbox.Handle, error) {
	rf, err := loadRecord(spec.StateDir)
	if err != nil {
		return nil, err
	}
	r := rf.get()
	if r.Exit != nil {
		removeEnvFile(spec.StateDir) // a daemon killed between exit record and removal
		s.reapRecovered(r)           // and between exit record and its array dir's removal
		return doneHandle(r.JobID, r.Task, *r.Exit), nil
	}
	if r.RunID != spec.RunID {
		return nil, fmt.Errorf("%w: submit record is for run %s", sandbox.ErrNotFound, r.RunID)
	}
	if r.JobID == 0 {
		// Killed while sbatch answered (or, for an array's task, before
		// the array was submitted): the job exists only if it has the name.
		name, task := jobName(spec.RunID), -1
		if r.Task != nil {
			name, task = r.JobName, *r.Task
		}
		j, ok := s.findByName(ctx, name, task)
		if !ok {
			return nil, fmt.Errorf("%w: no Slurm job named %s", sandbox.ErrNotFound, name)
		}
		if err := rf.update(func(r *record) { r.JobID = j.ID }); err != nil {
			return nil, err
		}
	}
	sum, err := runlog.Scan(spec.LogPath)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	w, err := runlog.Create(spec.LogPath)
	if err != nil {
		return nil, err
	}
	h := s.newHandle(spec, rf.get().JobID, rf, w, sum)
	if !rf.get().StartedAt.IsZero() {
		h.startOnce.Do(func() { close(h.started) })
	}
	go h.watch()
	return h, nil
}
