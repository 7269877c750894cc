package slurm

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sandbox"
)

// Files of a run in its state dir (shared with the compute nodes).
const (
	scriptFile   = "job.sh"
	stdinFile    = "stdin"
	stdoutFile   = "job.out"
	stderrFile   = "job.err"
	setupOutFile = "setup.out"
	setupErrFile = "setup.err"
	setupFailed  = "setup.failed" // holds the failing setup command's code
	stateFile    = "slurm.json"
	envFile      = "env.sh" // the run's env, 0600, removed when the run ends
)

// jobName ties a job to its run: a job id Slurm reuses (after a
// controller reset) carries another name and is never taken for ours.
func jobName(runID string) string { return "runbox-" + runID }

// quote makes s one word for sh.
func quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// script is the batch script: the run's environment read from its file,
// its assets copied into the workspace (placeAsset), setup commands
// (their output to the setup files, a failure recorded and ending the
// job with its code), then the command exec'd so that
// scancel's signals reach it. It holds no env values (Slurm keeps every
// batch script in its state directory).
func script(spec sandbox.Spec) string {
	var b strings.Builder
	b.WriteString("#!/bin/sh\n# runbox run " + spec.RunID + " (generated; env comes from " + envFile + ")\n")
	env := quote(filepath.Join(spec.StateDir, envFile))
	// A requeued attempt reads the file again; one that finds it gone
	// (the run was ended) fails rather than run without its env.
	fmt.Fprintf(&b, "[ -r %s ] || { echo \"runbox: %s is gone: the run's environment cannot be set\" >&2; exit 125; }\n. %s\n", env, env, env)
	dir := spec.StateDir
	for _, a := range spec.Assets {
		b.WriteString(placeAsset(a, spec.Workdir))
	}
	for _, s := range spec.Setup {
		fmt.Fprintf(&b, "sh -c %s >>%s 2>>%s </dev/null || { c=$?; echo $c >%s; exit $c; }\n",
			quote(s), quote(filepath.Join(dir, setupOutFile)), quote(filepath.Join(dir, setupErrFile)), quote(filepath.Join(dir, setupFailed)))
	}
	if spec.Shell {
		fmt.Fprintf(&b, "exec sh -c %s\n", quote(strings.Join(spec.Command, " ")))
	} else {
		q := make([]string, len(spec.Command))
		for i, a := range spec.Command {
			q[i] = quote(a)
		}
		fmt.Fprintf(&b, "exec %s\n", strings.Join(q, " "))
	}
	return b.String()
}

// placeAsset is the script's line that copies an asset into the
// workspace on the node, as a process run's supervisor does (a directory's
// contents into its destination, a file to its destination; links kept as
// links): the source is read where the job runs, on the filesystem the
// nodes share with this host, like the workspace. A copy that fails ends
// the job with 125 (runbox's "could not start"), saying which asset.
func placeAsset(a sandbox.Asset, workdir string) string {
	dst, err := a.Target(workdir)
	if err != nil { // the engine checks it; a spec from elsewhere says why
		return fmt.Sprintf("echo %s >&2; exit 125\n", quote("runbox: "+err.Error()))
	}
	fail := fmt.Sprintf("{ echo %s >&2; exit 125; }", quote("runbox: asset "+a.Src+" could not be placed in the workspace"))
	if st, err := os.Stat(a.Src); err == nil && st.IsDir() {
		return fmt.Sprintf("mkdir -p %s && cp -RP %s/. %[1]s || %s\n", quote(dst), quote(a.Src), fail)
	}
	return fmt.Sprintf("mkdir -p %s && cp -P %s %s || %s\n", quote(filepath.Dir(dst)), quote(a.Src), quote(dst), fail)
}

// The run's environment does not travel in sbatch's: slurmctld keeps a
// batch job's environment in its state directory (StateSaveLocation) for
// the job's life, and accounting may store it (AccountingStoreFlags=
// job_env), so HF_TOKEN=... given to runbox would sit there in clear.
// Instead it goes in a 0600 file in the run's own state dir (0700, on the
// filesystem the nodes share, like the workspace), which the batch script
// sources; the file is removed when the run ends. sbatch gets only what
// configures Slurm itself.

// splitEnv returns what sbatch's own environment keeps — SLURM_* and
// SBATCH_* (Slurm's options and settings), and names no shell can set —
// and what goes in the env file.
func splitEnv(env []string) (sbatch, file []string) {
	sbatch = []string{} // not nil: a nil env would inherit the daemon's
	for _, kv := range env {
		k, _, ok := strings.Cut(kv, "=")
		switch {
		case !ok:
		case strings.HasPrefix(k, "SLURM_") || strings.HasPrefix(k, "SBATCH_") || !shellName(k):
			sbatch = append(sbatch, kv)
		default:
			file = append(file, kv)
		}
	}
	return sbatch, file
}

func shellName(k string) bool {
	for i, r := range k {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return k != ""
}

// envScript is the env file: each variable set unless the job already has
// it, so that what Slurm sets in the job (SLURM_*, CUDA_VISIBLE_DEVICES for
// its GPUs) still wins, as it did over sbatch's exported environment.
func envScript(vars []string) []byte {
	var b strings.Builder
	for _, kv := range vars {
		k, v, _ := strings.Cut(kv, "=")
		fmt.Fprintf(&b, "[ -n \"${%s+x}\" ] || export %s=%s\n", k, k, quote(v))
	}
	return []byte(b.String())
}

// sbatchArgs maps the spec onto sbatch options.
func sbatchArgs(spec sandbox.Spec) ([]string, error) {
	dir := spec.StateDir
	args := []string{
		"--parsable",
		"--job-name=" + jobName(spec.RunID),
		"--comment=runbox:" + spec.RunID,
		"--chdir=" + spec.Workdir,
		"--output=" + filepath.Join(dir, stdoutFile),
		"--error=" + filepath.Join(dir, stderrFile),
		"--export=ALL",
		// A requeued job (preempted, node failure, scontrol requeue) then
		// appends its new attempt's output instead of truncating the files:
		// the offsets followed into the log stay true.
		"--open-mode=append",
		// One task: the command is one process tree, as in other backends.
		"--ntasks=1",
	}
	if spec.StdinFile != "" || len(spec.Stdin) > 0 {
		in := spec.StdinFile
		if in == "" {
			in = filepath.Join(dir, stdinFile)
		}
		args = append(args, "--input="+in)
	}
	if spec.Timeout > 0 {
		// Slurm counts whole minutes: round up, never cut a run short.
		args = append(args, "--time="+strconv.Itoa(int(math.Ceil(spec.Timeout.Minutes()))))
	}
	if m := spec.Limits.MemoryBytes; m > 0 {
		args = append(args, "--mem="+strconv.FormatInt((m+(1<<20)-1)>>20, 10)+"M")
	}
	if c := spec.Limits.CPUs; c > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(int(math.Ceil(c))))
	}
	switch g := spec.GPUs; {
	case g == "":
	case g == "all":
		return nil, fmt.Errorf("--gpus all has no meaning on a cluster: ask for a number (--gpus 2)")
	case strings.HasPrefix(g, "device="):
		return nil, fmt.Errorf("--gpus %s names this host's devices; on Slurm ask for a number or use --slurm-opt gres=gpu:TYPE:N", g)
	default:
		if _, err := strconv.Atoi(g); err != nil {
			return nil, fmt.Errorf("--gpus %q: want a number of GPUs", g)
		}
		// --gres=gpu:N: the generic-resource form every Slurm with GPUs
		// configured takes (--gpus needs select/cons_tres).
		args = append(args, "--gres=gpu:"+g)
	}
	if sl := spec.Slurm; sl != nil {
		for _, kv := range [][2]string{{"partition", sl.Partition}, {"account", sl.Account}, {"qos", sl.QOS}} {
			if kv[1] != "" {
				args = append(args, "--"+kv[0]+"="+kv[1])
			}
		}
		keys := make([]string, 0, len(sl.Options))
		for k := range sl.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkOpt(k); err != nil {
				return nil, err
			}
			if v := sl.Options[k]; v != "" {
				args = append(args, "--"+k+"="+v)
			} else {
				args = append(args, "--"+k)
			}
		}
	}
	return args, nil
}

// reserved are sbatch options runbox sets itself: overriding them would
// detach the job from its run (output files, name) or print a non-id.
var reserved = map[string]bool{
	"parsable": true, "job-name": true, "J": true, "output": true, "o": true,
	"error": true, "e": true, "comment": true, "export": true, "wrap": true,
	"input": true, "i": true, "chdir": true, "D": true, "array": true, "a": true,
	"wait": true, "W": true, "open-mode": true,
}

func checkOpt(k string) error {
	k = strings.TrimLeft(k, "-")
	if k == "" || strings.ContainsAny(k, "= \t\n") {
		return fmt.Errorf("--slurm-opt %q: want KEY=VALUE with an sbatch option name as KEY", k)
	}
	if reserved[k] {
		return fmt.Errorf("--slurm-opt %s: runbox sets this sbatch option itself", k)
	}
	return nil
}
