package classify

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Facts that runbox itself knows (the sandbox failed, the user cancelled, the
// timeout or stall watchdog fired, the kernel OOM-killed the run) outrank
// anything in the output: the output only shows what happened before.

func sandboxFailure(in *sdk.ClassifyInput) *sdk.Failure {
	e := in.SandboxError
	lc := strings.ToLower(e)
	f := &sdk.Failure{
		Code:       sdk.CodeSandboxError,
		Message:    "The " + orDefault(in.Sandbox, "sandbox") + " sandbox could not start or lost the run: " + clip(e, 300),
		Confidence: 1,
		Evidence:   []string{clip(e, 300)},
		Details:    map[string]string{"sandbox": in.Sandbox, "error": clip(e, 500)},
	}
	switch {
	case has(lc, "no such image", "pull access denied", "manifest unknown", "repository does not exist", "image not found", "not found: manifest"):
		f.Message = "The container image could not be found or pulled: " + clip(e, 300)
		f.Suggestions = []string{"Check the image name and tag, or pull it first with `docker pull IMAGE`.", "For a private registry, run `docker login` first."}
	case has(lc, "cannot connect to the docker daemon", "is the docker daemon running", "docker.sock", "connection refused", "daemon is not running"):
		f.Message = "The Docker daemon did not answer: " + clip(e, 300)
		f.Suggestions = []string{"Start Docker (`sudo systemctl start docker`, or open Docker Desktop) and retry.", "Or run with the process sandbox instead of docker."}
		f.Retryable = true
	case has(lc, "could not select device driver", "nvidia-container", "gpu", "nvidia"):
		f.Message = "The sandbox could not give the container a GPU: " + clip(e, 300)
		f.Suggestions = []string{"Install the NVIDIA Container Toolkit and restart Docker (`nvidia-ctk runtime configure --runtime=docker`).", "Or run without GPUs."}
	case has(lc, "no such file or directory", "workdir", "chdir", "not a directory"):
		f.Message = "The sandbox could not enter the working directory or find the program: " + clip(e, 300)
		f.Suggestions = []string{"Check that the working directory exists and is mounted into the sandbox."}
	case has(lc, "permission denied"):
		f.Suggestions = []string{"Check permissions on the working directory and Docker socket (is your user in the `docker` group?)."}
	case has(lc, "timeout", "timed out", "temporarily", "try again", "resource temporarily unavailable"):
		f.Retryable = true
		f.Suggestions = []string{"This looks transient; retry the run."}
	default:
		f.Suggestions = []string{"Check the sandbox backend with `runbox backends`, then retry."}
		f.Retryable = true
	}
	return f
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}

func cancelled(in *sdk.ClassifyInput) *sdk.Failure {
	return &sdk.Failure{
		Code:        sdk.CodeCancelled,
		Message:     "The run was stopped by the user through runbox" + ranFor(in) + ".",
		Suggestions: []string{"Nothing failed: retry the run when you want it to finish."},
		Retryable:   true,
		Confidence:  1,
	}
}

func ranFor(in *sdk.ClassifyInput) string {
	if in.DurationSeconds <= 0 {
		return ""
	}
	return " after " + seconds(in.DurationSeconds)
}

func seconds(s float64) string {
	switch {
	case s >= 3600:
		return strconv.FormatFloat(s/3600, 'f', 1, 64) + " h"
	case s >= 120:
		return strconv.FormatFloat(s/60, 'f', 1, 64) + " min"
	}
	return strconv.FormatFloat(s, 'f', 0, 64) + " s"
}

// oomFact: the sandbox saw the kernel or cgroup OOM-kill the run.
func (sc *scanner) oomFact(c *cand) *sdk.Failure {
	in := sc.in
	msg := "The run was killed for running out of host memory (the sandbox reported an OOM kill)"
	if in.Limits.MemoryBytes > 0 {
		msg = "The run was killed at its memory limit (the sandbox reported an OOM kill)"
	}
	d := map[string]string{"source": "sandbox"}
	if in.PeakRSSBytes > 0 {
		d["peak_rss"] = human(float64(in.PeakRSSBytes))
		msg += "; peak RSS " + human(float64(in.PeakRSSBytes))
	}
	if in.Limits.MemoryBytes > 0 {
		d["limit"] = human(float64(in.Limits.MemoryBytes))
		msg += " against a limit of " + human(float64(in.Limits.MemoryBytes))
	}
	f := &sdk.Failure{
		Code:        sdk.CodeOOMKilled,
		Message:     msg + ".",
		Suggestions: hostOOMSuggestions(in),
		Confidence:  1,
		Details:     d,
	}
	if c != nil && c.at >= 0 && (c.code == sdk.CodeOOMKilled || c.code == sdk.CodeKilled) {
		f.Evidence = []string{clip(sc.lines[c.at].text, 300)}
		for k, v := range c.details {
			if d[k] == "" {
				d[k] = v
			}
		}
	}
	return f
}

func hostOOMSuggestions(in *sdk.ClassifyInput) []string {
	s := []string{}
	if in.Limits.MemoryBytes > 0 {
		m := "Raise the run's memory limit (--memory; it was " + human(float64(in.Limits.MemoryBytes))
		if in.PeakRSSBytes > 0 {
			m += "; the measured peak was " + human(float64(in.PeakRSSBytes))
		}
		s = append(s, m+") if the machine has more to give.")
	} else if in.PeakRSSBytes > 0 {
		s = append(s, "The run's measured peak was "+human(float64(in.PeakRSSBytes))+": compare it with the memory the machine (or container) has free.")
	}
	if b := (&scanner{in: in}).batchSuggestion(); b != "" {
		s = append(s, b)
	}
	return append(s,
		"Reduce what the process holds in RAM: smaller batch size, stream or memory-map the dataset instead of loading it whole, free large objects you no longer need.",
		"With PyTorch DataLoader, lower num_workers (each worker copies the dataset) and avoid Python lists of tensors in the Dataset.",
		"Load models with low_cpu_mem_usage=True / device_map=\"auto\", or in a lower precision (bf16/fp16, 8-bit).",
	)
}

func (sc *scanner) timeout() *sdk.Failure {
	in := sc.in
	msg := "runbox's timeout fired"
	d := map[string]string{}
	if in.Limits.TimeoutSeconds > 0 {
		msg += " after " + seconds(in.Limits.TimeoutSeconds)
		d["timeout_seconds"] = strconv.FormatFloat(in.Limits.TimeoutSeconds, 'f', 0, 64)
	}
	sugg := []string{}
	if p := in.Progress; p != nil && p.Percentage > 0 && p.Percentage < 100 && in.DurationSeconds > 0 {
		need := in.DurationSeconds * 100 / p.Percentage * 1.2
		msg += " with the job " + strconv.FormatFloat(p.Percentage, 'f', 0, 64) + "% done"
		d["estimated_seconds"] = strconv.FormatFloat(need, 'f', 0, 64)
		sugg = append(sugg, "At this pace the whole job needs about "+seconds(need)+": set the timeout to at least that.")
	}
	sugg = append(sugg,
		"Raise the timeout (--timeout; timeout_minutes over MCP) if the job was making progress.",
		"Save checkpoints periodically so a stopped run can resume instead of starting over.",
		"If it was stuck rather than slow, check the last output lines for a hang (network download, NCCL init, waiting on input).")
	return &sdk.Failure{
		Code: sdk.CodeTimeout, Message: msg + ", so the run was stopped.", Suggestions: sugg,
		Confidence: 1, Details: d, Evidence: sc.tailEvidence(3),
	}
}

func (sc *scanner) stalled() *sdk.Failure {
	return &sdk.Failure{
		Code:    sdk.CodeStalled,
		Message: "The run printed nothing for " + stallWindow(sc.in) + " and was stopped as hung" + ranFor(sc.in) + ".",
		Suggestions: []string{
			"If the program was working but silent, its output may be buffered: run Python with `-u` or PYTHONUNBUFFERED=1, or print progress more often.",
			"Find where it hangs: `py-spy dump --pid PID`, or faulthandler.dump_traceback_later() in the script.",
			"Common hangs: waiting on stdin (input()), a network download, NCCL initialisation (set NCCL_DEBUG=INFO), DataLoader workers (try num_workers=0).",
		},
		Confidence: 1,
		Evidence:   sc.tailEvidence(3),
	}
}

// stallWindow names the stall window: its length when runbox said it.
func stallWindow(in *sdk.ClassifyInput) string {
	if in.Limits.StallSeconds > 0 {
		return seconds(in.Limits.StallSeconds) + " (--stall-timeout)"
	}
	return "the stall window"
}

// tailEvidence returns the last n non-empty lines.
func (sc *scanner) tailEvidence(n int) []string {
	var ev []string
	for i := len(sc.lines) - 1; i >= 0 && len(ev) < n; i-- {
		if t := sc.lines[i].text; t != "" {
			ev = append([]string{clip(t, 300)}, ev...)
		}
	}
	return ev
}
