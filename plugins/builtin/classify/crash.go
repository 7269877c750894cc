package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// matchCrash recognises what shells, runtimes and schedulers print when a
// process dies: "Segmentation fault (core dumped)", "Killed", "Terminated",
// KeyboardInterrupt, "terminate called after throwing", slurm cancellations.
func matchCrash(sc *scanner, i int, l *line) bool {
	lc, t := l.lc, l.text
	// matchLine calls this only for lines that hold one of its gates.
	n := 0
	if k, ok := deathSignal(lc); ok {
		// torchrun's agent: "Received 1 death signal, shutting down
		// workers", "SignalException: Process 2920830 got signal: 1".
		if c, ok := sc.sigCand(k, "received by the launcher"); ok {
			c.conf = 0.8
			sc.add(i, c)
			return true
		}
	}
	switch {
	case has(lc, "segmentation fault", "sigsegv", "signal 11", "segfault at", "bus error", "sigbus") || windowsCrash(lc):
		n = 11
		if has(lc, "bus error", "sigbus") {
			n = 7
		}
	case has(lc, "aborted (core dumped)", "fatal python error: aborted", "sigabrt", "abort trap", "terminate called after throwing", "terminate called without",
		"double free or corruption", "free(): invalid", "malloc(): ", "stack smashing detected", "corrupted size vs") || glogCheck(lc):
		n = 6
	case has(lc, "illegal instruction", "sigill", "illegal hardware instruction", "compiled to use avx", "exec format error") && !has(lc, "cuda", "was encountered"):
		n = 4
	case strings.HasPrefix(lc, "keyboardinterrupt") || sc.roles[i] == roleExc && strings.HasSuffix(sc.excType(i), "KeyboardInterrupt"):
		n = 2
	case lc == "killed" || gluedKilled(t) || strings.HasPrefix(lc, "killed: 9") || strings.HasPrefix(lc, "zsh: killed") || jobKilled(lc, " killed") ||
		strings.Contains(lc, "killed by signal: killed") || has(lc, "sigkill") && !has(lc, "sending"):
		n = 9
	case lc == "terminated" || strings.HasPrefix(lc, "zsh: terminated") || jobKilled(lc, " terminated") || has(lc, "got signal: 15", "signal 15 (sigterm)") ||
		has(lc, "sigterm") && has(lc, "received", "got", "caught") && !has(lc, "closing signal", "sending"):
		n = 15
	case strings.Contains(lc, "***") && has(lc, "cancelled at", "due to time limit", "due to preemption"):
		c := cand{code: sdk.CodeTerminated, conf: 0.9, retry: !strings.Contains(lc, "time limit"), details: map[string]string{"source": "slurm"}}
		c.msg = "The cluster scheduler (Slurm) cancelled the job: " + clip(t, 200)
		c.sugg = []string{"Resubmit it; save checkpoints so a cancelled job can resume."}
		if strings.Contains(lc, "time limit") {
			c.msg = "The cluster scheduler (Slurm) stopped the job at its time limit."
			c.sugg = []string{"Request more time (sbatch --time=...), or checkpoint and resume in shorter jobs."}
		}
		sc.add(i, c)
		return true
	default:
		return false
	}
	c, _ := sc.sigCand(n, "reported in the output")
	c.conf = 0.9
	if c.inferred {
		c.conf = 0.6 // the shell saw the SIGKILL; who sent it is inferred
	}
	switch n {
	case 6:
		if k := strings.Index(lc, "what():"); k >= 0 {
			c.details["what"] = strings.TrimSpace(t[k+7:])
		}
		if strings.Contains(lc, "terminate called") || glogCheck(lc) {
			c.msg = "A native library aborted the process: " + clip(t, 200)
		}
	case 9:
		if strings.Contains(lc, "dataloader worker") {
			c.msg = "A PyTorch DataLoader worker was killed with SIGKILL — almost always the kernel OOM killer running out of host memory or shared memory."
			c.sugg = append([]string{"Lower num_workers (try 0 to confirm), shrink what each worker holds, and in Docker raise --shm-size."}, c.sugg...)
		}
	case 4:
		if strings.Contains(lc, "exec format error") {
			c.msg = "The program is built for another CPU architecture (exec format error): " + clip(t, 200)
		}
	case 2:
		c.msg = "The run was interrupted (KeyboardInterrupt / Ctrl-C)."
	}
	sc.add(i, c)
	return true
}

// windowsCrash spots a Windows process that died of an access violation or
// a stack overflow: "exit code -1073741819 (0xC0000005)", "Windows fatal
// exception: access violation" — the counterparts of SIGSEGV.
func windowsCrash(lc string) bool {
	if strings.Contains(lc, "windows fatal exception") {
		return has(lc, "access violation", "stack overflow")
	}
	return has(lc, "0xc0000005", "0xc00000fd", "-1073741819", "-1073741571", "3221225477", "3221225725") && has(lc, "exit", "code", "status", "returned")
}

// jobKilled matches bash job-control reports: "line 3: 12345 Killed  python x.py".
func jobKilled(lc, word string) bool {
	k := strings.Index(lc, word)
	if k <= 0 {
		return false
	}
	head := strings.TrimSpace(lc[:k])
	f := strings.Fields(head)
	return len(f) > 0 && allDigits(f[len(f)-1]) && (strings.Contains(head, "line ") || len(f) == 1)
}

var gateCrash = []string{"fault", "0xc0000005", "0xc00000fd", "-1073741819", "-1073741571", "3221225477", "3221225725", "windows fatal exception", "sigsegv", "sigbus", "signal", "abort", "sigabrt", "terminate", "check failed", "double free", "free(): ", "malloc(): ",
	"stack smashing", "illegal", "sigill", "avx", "exec format", "interrupt", "killed", "sigkill", "sigterm", "cancelled at", "preempt"}

// gluedKilled spots the shell's "Killed" stuck to the end of a progress
// line that had no newline: "... - loss: 0.60 - accuracy: 0.77Killed",
// "45%|████▌     | 450/1000 [01:02<01:15, 7.2it/s]Killed".
func gluedKilled(t string) bool {
	if len(t) <= 6 || !strings.HasSuffix(t, "Killed") {
		return false
	}
	c := t[len(t)-7]
	return isDigit(c) || c == ']' || c == '|' || c == ')' || c == '%' || c >= 0x80
}

// deathSignal reads the signal a launcher says it received.
func deathSignal(lc string) (int, bool) {
	if k := strings.Index(lc, " death signal"); k > 0 {
		f := strings.Fields(lc[:k])
		if len(f) >= 2 && strings.HasSuffix(f[len(f)-2], "received") {
			if n, ok := intAfter(f[len(f)-1], ""); ok && n > 0 && n < 65 {
				return n, true
			}
		}
	}
	if n, ok := intAfter(lc, "got signal:"); ok && n > 0 && n < 65 {
		return n, true
	}
	return 0, false
}

// glogCheck reports a glog/absl CHECK failure ("F0102 ... file.cc:12] Check
// failed: x == y", or the line on its own): an abort. "check failed" in a
// program's own message ("smoke check failed: data dir missing") is not.
func glogCheck(lc string) bool {
	i := strings.Index(lc, "check failed:")
	return i == 0 || i >= 2 && lc[i-2:i] == "] "
}
