package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// matchTimeout recognises a time limit that the program or its wrapper
// enforced itself: subprocess.TimeoutExpired, a bare TimeoutError that no
// network or collective matcher claimed, pytest-timeout, coreutils
// timeout(1) and CI job limits. runbox's own timeout is a fact (facts.go).
func matchTimeout(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeTimeout, conf: 0.8, retry: true, details: map[string]string{}}
	short := sc.excType(i)
	if k := strings.LastIndexByte(short, '.'); k >= 0 {
		short = short[k+1:]
	}
	isExc := sc.roles[i] == roleExc
	switch {
	case isExc && short == "TimeoutExpired" || strings.HasPrefix(lc, "subprocess.timeoutexpired"):
		c.details["source"] = "subprocess"
		c.msg = "A subprocess ran past its time limit (subprocess.TimeoutExpired): " + clip(l.text, 200)
		c.sugg = []string{"Raise the timeout= passed to subprocess.run/communicate, or find why the child hangs (run it by itself)."}
	case has(lc, "exceeded the maximum execution time", "has exceeded the maximum execution time", "job exceeded maximum time", "execution time limit exceeded"):
		c.details["source"] = "ci"
		c.msg = "The job ran past its time limit: " + clip(l.text, 200)
		c.sugg = []string{"Raise the job's time limit (timeout-minutes in GitHub Actions), cache dependencies and data, or split the work."}
	case strings.HasPrefix(lc, "failed: timeout >") || strings.Contains(lc, "+++ timeout +++"):
		c.details["source"] = "pytest-timeout"
		c.msg = "A test ran past pytest-timeout's limit: " + clip(l.text, 200)
		c.sugg = []string{"Raise the limit (--timeout / @pytest.mark.timeout) or find the hang in the stack pytest-timeout printed."}
	case strings.HasPrefix(lc, "timeout: the monitored command dumped core") || strings.HasPrefix(lc, "timeout: sending signal"):
		c.details["source"] = "timeout(1)"
		c.msg = "The command was stopped by timeout(1) at its time limit."
		c.sugg = []string{"Raise the limit given to `timeout`, or make the command faster (smaller data, fewer steps)."}
	case isExc && (short == "TimeoutError" || short == "DeadlineExceeded" || strings.HasSuffix(short, "TimeoutError")) && !has(lc, "connect", "socket", "http", "ssl"):
		c.conf = 0.65
		c.msg = "An operation ran past its time limit: " + clip(l.text, 200)
		c.sugg = []string{"Raise the timeout of the operation named in the traceback, or find what it waits on (a hung worker, a lock, a server that does not answer)."}
	default:
		return false
	}
	sc.add(i, c)
	return true
}

var gateTimeout = []string{"timeout", "execution time", "deadline"}
