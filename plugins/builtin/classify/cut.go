package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// cutTraceback: output that ends inside a traceback — a header or frames
// with no exception line after them, because the tail or the paste was cut
// — still says where the program was. When its innermost frames are in a
// collective-communication or network library, that names the failure's
// kind; Jupyter's header ("TimeoutError   Traceback (most recent call
// last)") also names the exception. A guess from location, so it ranks
// with a generic exception, below any error the output states.
func (sc *scanner) cutTraceback() {
	end := len(sc.lines) - 1
	for end >= 0 && sc.lines[end].text == "" {
		end--
	}
	if end < 0 || sc.roles[end] == roleExc || sc.roles[end] == roleMsg {
		return
	}
	start := -1
	for i := end; i >= 0 && sc.roles[i] != roleExc && sc.roles[i] != roleMsg; i-- {
		if hasTracebackHeader(sc.lines[i].lc) {
			start = i
			break
		}
	}
	if start < 0 { // no header: frames alone, up to the end
		if sc.roles[end] != roleFrame {
			return
		}
		start = end
		for start > 0 && sc.roles[start-1] == roleFrame {
			start--
		}
	}
	from := max(start, end-8) // the innermost frames
	var b strings.Builder
	for i := from; i <= end; i++ {
		b.WriteString(sc.lines[i].lc)
		b.WriteByte('\n')
	}
	s := strings.ReplaceAll(b.String(), `\`, "/")
	var code, what string
	switch {
	case has(s, gateCutCollective...):
		code, what = sdk.CodeDistributedError, "collective communication (NCCL/Gloo process-group setup or a collective)"
	case has(s, gateCutNetwork...):
		code, what = sdk.CodeNetworkError, "a network call (HTTP/socket/TLS)"
	default:
		return
	}
	head := ""
	if k := strings.Index(sc.lines[start].text, "Traceback (most recent call last)"); k > 0 {
		if typ, _, ok := parseException(strings.TrimSpace(sc.lines[start].text[:k]), true); ok {
			head = typ
		}
	}
	msg := "The output ends inside a traceback, cut before its exception line"
	if head != "" {
		msg += " (its header names " + head + ")"
	}
	msg += "; the innermost frames are in " + what + ", so this is most likely where it failed."
	c := cand{
		code: code, conf: 0.35, at: end, tier: tierGeneric, rank: codeRank[code], msg: msg,
		sugg:    []string{"Get the rest of the output (`runbox logs RUN`, or the full log the paste came from): the exception line after these frames names the error."},
		details: map[string]string{"cut": "traceback"},
	}
	if head != "" {
		c.details["exception"] = head
	}
	if code == sdk.CodeNetworkError {
		c.retry = true
		c.sugg = append(c.sugg, "Check that the host can reach the network (proxy, DNS, firewall, offline cluster nodes) and retry.")
	} else {
		c.sugg = append(c.sugg, "Check that every rank starts and can reach the others (NCCL_DEBUG=INFO shows where setup stops).")
	}
	sc.cands = append(sc.cands, c)
}

var (
	gateCutCollective = []string{"nccl", "init_process_group", "distributed_c10d.py", "gloo", "all_reduce(", "allreduce("}
	gateCutNetwork    = []string{"urllib/request.py", "http/client.py", "/socket.py", "urllib3/", "/requests/", "/ssl.py", "urlopen(", "getaddrinfo(", "create_connection("}
)
