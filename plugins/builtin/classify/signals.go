package classify

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

var sigNums = map[string]int{
	"HUP": 1, "INT": 2, "QUIT": 3, "ILL": 4, "TRAP": 5, "ABRT": 6, "IOT": 6, "BUS": 7, "FPE": 8,
	"KILL": 9, "USR1": 10, "SEGV": 11, "USR2": 12, "PIPE": 13, "ALRM": 14, "TERM": 15, "XCPU": 24, "XFSZ": 25,
}

var sigNames = map[int]string{
	1: "SIGHUP", 2: "SIGINT", 3: "SIGQUIT", 4: "SIGILL", 5: "SIGTRAP", 6: "SIGABRT", 7: "SIGBUS", 8: "SIGFPE",
	9: "SIGKILL", 11: "SIGSEGV", 13: "SIGPIPE", 14: "SIGALRM", 15: "SIGTERM", 24: "SIGXCPU", 25: "SIGXFSZ",
}

// signal returns the signal that ended the run: the sandbox's Signal field,
// a negative exit code (Python's subprocess convention) or a shell's 128+n.
func (sc *scanner) signal() int {
	if s := strings.ToUpper(strings.TrimSpace(sc.in.Signal)); s != "" {
		s = strings.TrimPrefix(s, "SIG")
		if n, ok := sigNums[s]; ok {
			return n
		}
		if n, err := strconv.Atoi(s); err == nil && n > 0 && n < 65 {
			return n
		}
		switch {
		case strings.HasPrefix(s, "KILL"):
			return 9
		case strings.HasPrefix(s, "TERM"):
			return 15
		case strings.HasPrefix(s, "SEGM"):
			return 11
		}
	}
	code := sc.in.ExitCode
	switch {
	case code < 0 && code >= -64:
		return -code
	case code > 128 && code <= 128+31:
		return code - 128
	}
	return 0
}

func (sc *scanner) signalName() string {
	if n := sc.signal(); n > 0 {
		if s, ok := sigNames[n]; ok {
			return s
		}
		return "signal " + strconv.Itoa(n)
	}
	return ""
}

// memoryNearLimit: the run's peak RSS reached 90% of its memory limit.
func (sc *scanner) memoryNearLimit() bool {
	l := sc.in.Limits.MemoryBytes
	return l > 0 && float64(sc.in.PeakRSSBytes) >= 0.9*float64(l)
}

// sigCand explains death by signal n; how says where it was seen.
func (sc *scanner) sigCand(n int, how string) (cand, bool) {
	name := sigNames[n]
	if name == "" {
		name = "signal " + strconv.Itoa(n)
	}
	d := map[string]string{"signal": name}
	c := cand{details: d, conf: 0.8}
	switch n {
	case 9:
		if sc.memoryNearLimit() {
			return sc.oomByRSS(how), true
		}
		if at, ok := sc.otherSender(); ok {
			c.code, c.conf = sdk.CodeKilled, 0.6
			c.msg = "The process was killed with SIGKILL (" + how + ") by something other than the OOM killer: " + clip(sc.lines[at].text, 160)
			c.sugg = []string{
				"Nothing in the program failed: find out why it was stopped (a restart, `kill -9`, a scheduler or a health check) and retry.",
			}
			c.ev = []int{at}
			return c, true
		}
		if why, ok := sc.notOOM(); ok {
			c.code, c.conf = sdk.CodeKilled, 0.7
			c.details["source"] = "not the OOM killer"
			c.msg = "The process was killed with SIGKILL (" + how + ") by something other than the OOM killer: " + why + "."
			c.sugg = []string{
				"Nothing in the program failed: find who sent SIGKILL — `kill -9` from another shell or script, the program itself (`kill -9 $$`, os.kill), a scheduler or batch system, a container runtime stopping it, or a watchdog — and retry.",
				"`journalctl -k` and the scheduler's log show kills it made; `dmesg -T | grep -i 'killed process'` stays empty for a kill that was not for memory.",
			}
			return c, true
		}
		// A SIGKILL nobody in the output claims is, in practice, the
		// kernel's OOM killer (issue #15): say so, with a confidence that
		// says it is an inference, and how to confirm it.
		c.code, c.conf, c.inferred = sdk.CodeOOMKilled, 0.5, true
		c.details["source"] = "inferred from SIGKILL"
		c.msg = "The process was killed with SIGKILL (" + how + ") and nothing in the output says who sent it: most likely the kernel's OOM killer (host memory ran out)"
		if in := sc.in; in.PeakRSSBytes > 0 {
			c.details["peak_rss"] = human(float64(in.PeakRSSBytes))
			c.msg += "; the measured peak was " + human(float64(in.PeakRSSBytes))
			if in.Limits.MemoryBytes > 0 {
				c.details["limit"] = human(float64(in.Limits.MemoryBytes))
				c.msg += " of a " + human(float64(in.Limits.MemoryBytes)) + " limit"
			}
		}
		c.msg += "."
		c.sugg = append([]string{
			"Confirm it in the kernel log: `dmesg -T | grep -i -E 'killed process|out of memory'` or `journalctl -k | grep -i oom` (a memory kill names the process and its RSS).",
		}, hostOOMSuggestions(sc.in)...)
		c.sugg = append(c.sugg, "If the kernel log shows no OOM kill, something else sent SIGKILL (a scheduler, a watchdog, `kill -9`): retry.")
	case 11, 7:
		c.code, c.conf = sdk.CodeSegfault, 0.85
		c.msg = "The process crashed with " + name + " (" + how + "): a native extension (C/C++/CUDA code) touched invalid memory."
		c.sugg = []string{
			"Rerun with `python -X faulthandler` (or PYTHONFAULTHANDLER=1) to see the Python stack at the crash.",
			"Often a binary mismatch: reinstall compiled packages so they match each other (numpy ABI vs. torch/opencv/pandas wheels, torch vs. CUDA).",
			"With PyTorch DataLoader, try num_workers=0; in Docker, SIGBUS usually means /dev/shm is too small (`--shm-size=8g` or `--ipc=host`).",
		}
	case 6, 3:
		c.code = sdk.CodeAborted
		c.msg = "The process aborted with " + name + " (" + how + "): a native library hit a fatal check or an uncaught C++ exception."
		c.sugg = []string{
			"Look just above the abort for \"terminate called after throwing\", \"Check failed\" or \"what():\" — that line names the real error.",
			"Check that compiled packages match (torch/CUDA/cuDNN, TensorFlow/protobuf, numpy ABI); reinstalling them in a fresh venv often fixes it.",
		}
	case 4:
		c.code, c.conf = sdk.CodeIllegalInstruction, 0.85
		c.msg = "The CPU met an instruction it does not support (" + name + ", " + how + "): usually a binary wheel built for a newer CPU (AVX/AVX2/AVX-512) or for another architecture."
		c.sugg = illegalSuggestions()
	case 2:
		c.code, c.retry, c.conf = sdk.CodeInterrupted, true, 0.85
		c.msg = "The run was interrupted with SIGINT (Ctrl-C) (" + how + ")."
		c.sugg = []string{"Nothing in the program failed: retry when you want it to finish."}
	case 15, 1:
		c.code, c.retry = sdk.CodeTerminated, true
		c.msg = "The run received " + name + " from outside runbox (" + how + "): a scheduler, a container stop, a closed terminal or a system shutdown."
		c.sugg = []string{
			"If a cluster scheduler preempted or stopped the job, resubmit it (and save checkpoints so it can resume).",
			"Run long jobs detached (`runbox run --detach`) so a closed terminal does not stop them.",
		}
	default:
		return c, false
	}
	return c, true
}

func illegalSuggestions() []string {
	return []string{
		"Install a build made for this CPU: e.g. an older TensorFlow/jaxlib without AVX, or conda-forge builds.",
		"On Apple silicon, use an arm64 Python (not an x86 one under Rosetta): `python -c 'import platform; print(platform.machine())'` should say arm64.",
		"In Docker, make the image architecture match the host (`--platform`), or rebuild for it.",
	}
}

// notOOM is the evidence runbox measured against an OOM kill: the
// sandbox found no OOM event where it would be recorded, or the run's
// peak memory was far from any limit (the OOM killer picks the largest
// process; one that never grew is not it). Posted logs carry neither, so
// there a bare SIGKILL stays the OOM killer's (issue #15).
func (sc *scanner) notOOM() (string, bool) {
	in := sc.in
	peak, limit := float64(in.PeakRSSBytes), float64(in.Limits.MemoryBytes)
	switch {
	case in.OOMChecked && in.PeakRSSBytes > 0:
		return "the sandbox recorded no OOM kill (the memory cgroup's OOM counter, the container's or the Slurm job's state) and the run's peak memory was " + human(peak), true
	case in.OOMChecked:
		return "the sandbox recorded no OOM kill (the memory cgroup's OOM counter, the container's or the Slurm job's state)", true
	case in.PeakRSSBytes > 0 && limit > 0 && peak < 0.5*limit:
		return "its peak memory was " + human(peak) + " of a " + human(limit) + " limit", true
	case in.PeakRSSBytes > 0 && limit == 0 && peak < 256<<20:
		return "its peak memory was only " + human(peak), true
	}
	return "", false
}

func (sc *scanner) oomByRSS(how string) cand {
	in := sc.in
	return cand{
		code: sdk.CodeOOMKilled, conf: 0.8,
		msg: "The process was killed with SIGKILL (" + how + ") while its memory was at " + human(float64(in.PeakRSSBytes)) +
			" of its " + human(float64(in.Limits.MemoryBytes)) + " limit: the OOM killer stopped it.",
		sugg:    hostOOMSuggestions(in),
		details: map[string]string{"peak_rss": human(float64(in.PeakRSSBytes)), "limit": human(float64(in.Limits.MemoryBytes)), "signal": "SIGKILL"},
	}
}

// addExit adds the explanation that the exit status alone gives.
func (sc *scanner) addExit() {
	code := sc.in.ExitCode
	how := "exit status " + strconv.Itoa(code)
	if sc.in.Signal != "" {
		how = "signal " + sc.in.Signal
	}
	if n := sc.signal(); n > 0 {
		if c, ok := sc.sigCand(n, how); ok {
			c.at, c.tier, c.rank = -1, tierExit, codeRank[c.code]
			if c.inferred {
				c.rank, c.conf = codeRank[sdk.CodeKilled], 0.45
			}
			sc.cands = append(sc.cands, c)
		}
		return
	}
	prog := ""
	if len(sc.in.Command) > 0 {
		prog = sc.in.Command[0]
	}
	switch code {
	case 127:
		sc.cands = append(sc.cands, cand{
			code: sdk.CodeCommandNotFound, conf: 0.6, at: -1, tier: tierExit, rank: codeRank[sdk.CodeCommandNotFound],
			msg:     "Exit status 127: command not found — the shell could not find the program to run" + quoteIf(prog) + ".",
			sugg:    commandSuggestions(prog),
			details: setDetail(map[string]string{"exit_code": "127"}, "command", prog),
		})
	case 124:
		// coreutils timeout(1) exits 124 when the limit fires.
		sc.cands = append(sc.cands, cand{
			code: sdk.CodeTimeout, conf: 0.5, at: -1, tier: tierExit, rank: codeRank[sdk.CodeTimeout], retry: true,
			msg:     "Exit status 124: the command was most likely stopped by timeout(1) at its time limit.",
			sugg:    []string{"Raise the limit given to `timeout`, or make the command faster (smaller data, fewer steps)."},
			details: map[string]string{"exit_code": "124", "source": "timeout(1)"},
		})
	case 126:
		sc.cands = append(sc.cands, cand{
			code: sdk.CodePermissionDenied, conf: 0.6, at: -1, tier: tierExit, rank: codeRank[sdk.CodePermissionDenied],
			msg:     "Exit status 126: the program" + quoteIf(prog) + " exists but could not be executed (not executable, or a directory).",
			sugg:    []string{"Make the script executable (`chmod +x " + orDefault(prog, "SCRIPT") + "`) or run it through its interpreter (`bash script.sh`, `python script.py`)."},
			details: setDetail(map[string]string{"exit_code": "126"}, "command", prog),
		})
	}
}

func quoteIf(s string) string {
	if s == "" {
		return ""
	}
	return " `" + s + "`"
}

// refine applies the rules that need the whole picture.
func (sc *scanner) refine(c *cand) {
	if c.code == sdk.CodeKilled && sc.memoryNearLimit() {
		o := sc.oomByRSS("SIGKILL")
		o.at, o.ev = c.at, c.ev
		*c = o
	}
	if c.tier < tierGeneric && sc.isShellScript() {
		if i := sc.lastLine(); i >= 0 && strings.HasPrefix(sc.lines[i].text, "+ ") {
			cmd := strings.TrimPrefix(sc.lines[i].text, "+ ")
			*c = cand{
				code: sdk.CodeScriptError, conf: 0.55, at: i,
				msg:     "The shell script stopped after `" + clip(cmd, 120) + "` failed (set -e exits on the first failing command).",
				sugg:    []string{"Run `" + clip(cmd, 120) + "` by itself to see why it fails.", "If the failure is expected, append `|| true` to that command."},
				details: map[string]string{"command": clip(cmd, 200)},
			}
		}
	}
}

func (sc *scanner) isShellScript() bool {
	for k, a := range sc.in.Command {
		if k > 1 {
			break
		}
		if strings.HasSuffix(a, ".sh") || a == "bash" || a == "sh" || strings.HasSuffix(a, "/bash") || strings.HasSuffix(a, "/sh") {
			return true
		}
	}
	return false
}

func (sc *scanner) lastLine() int {
	for i := len(sc.lines) - 1; i >= 0; i-- {
		if sc.lines[i].text != "" {
			return i
		}
	}
	return -1
}

func (sc *scanner) nonzeroMessage() string {
	msg := "The run exited with status " + strconv.Itoa(sc.in.ExitCode)
	if s := sc.signalName(); s != "" {
		msg = "The run was ended by " + s
	}
	if i := sc.lastErrorLine(); i >= 0 {
		return msg + "; the last error line in the output was: " + clip(sc.lines[i].text, 200)
	}
	return msg + " and the output names no known cause."
}

func (sc *scanner) nonzeroEvidence(c *cand) {
	if i := sc.lastErrorLine(); i >= 0 {
		c.at = i
	} else if i := sc.lastLine(); i >= 0 {
		c.ev = []int{i}
	}
	c.sugg = []string{"Read the end of the log (`runbox logs RUN`) for the program's own error message.", "Rerun with more verbose output (e.g. a --verbose flag, `set -x` for shell scripts) to see where it stops."}
	c.details = setDetail(map[string]string{"exit_code": strconv.Itoa(sc.in.ExitCode)}, "signal", sc.signalName())
}

// lastErrorLine finds the last line that reads like an error report.
func (sc *scanner) lastErrorLine() int {
	for i := len(sc.lines) - 1; i >= 0 && i >= len(sc.lines)-200; i-- {
		lc := sc.lines[i].lc
		if sc.roles[i] != roleFrame && !sc.lines[i].weak && has(lc, "error", "fatal", "panic", "failed", "exception") {
			return i
		}
	}
	return -1
}

// otherSender finds evidence that a SIGKILL did not come from the OOM
// killer: Docker's own "OOMKilled": false, a restart or kill -9 in the
// output, Kubernetes' "Reason: Error" for the killed container (it says
// OOMKilled for a memory kill).
func (sc *scanner) otherSender() (int, bool) {
	if sc.sender != 0 {
		return sc.sender - 1, sc.sender > 0
	}
	sc.sender = -1
	for i := range sc.lines {
		lc := sc.lines[i].lc
		if notOOMFlag(lc) || has(lc, "supervisorctl restart", "supervisorctl stop", "kill -9 ", "kill -kill", "kill -s kill", "docker kill", "pkill -9", "killall -9") ||
			strings.HasPrefix(lc, "reason: error") {
			sc.sender = i + 1
			return i, true
		}
	}
	return 0, false
}

// notOOMFlag reports Docker's state saying the kill was not for memory:
// "OOMKilled": false, OOMKilled:false.
func notOOMFlag(lc string) bool {
	k := strings.Index(lc, "oomkilled")
	if k < 0 {
		return false
	}
	rest := strings.TrimLeft(lc[k+len("oomkilled"):], "\\\"': =")
	return strings.HasPrefix(rest, "false")
}
