package cli

import (
	"strconv"
	"strings"
	"syscall"
)

var signalNames = map[string]syscall.Signal{
	"SIGHUP": syscall.SIGHUP, "SIGINT": syscall.SIGINT, "SIGQUIT": syscall.SIGQUIT,
	"SIGILL": syscall.SIGILL, "SIGABRT": syscall.SIGABRT, "SIGBUS": syscall.SIGBUS,
	"SIGFPE": syscall.SIGFPE, "SIGKILL": syscall.SIGKILL, "SIGSEGV": syscall.SIGSEGV,
	"SIGPIPE": syscall.SIGPIPE, "SIGALRM": syscall.SIGALRM, "SIGTERM": syscall.SIGTERM,
	"SIGUSR1": syscall.SIGUSR1, "SIGUSR2": syscall.SIGUSR2, "SIGXCPU": syscall.SIGXCPU,
}

// signalName normalises "9", "kill", "SIGKILL" to "SIGKILL".
func signalName(s string) string {
	s = strings.ToUpper(strings.TrimSpace(s))
	if n, err := strconv.Atoi(s); err == nil {
		for name, sig := range signalNames {
			if int(sig) == n {
				return name
			}
		}
		return "SIG" + s
	}
	if !strings.HasPrefix(s, "SIG") {
		s = "SIG" + s
	}
	return s
}

func signalNumber(name string) int {
	if sig, ok := signalNames[name]; ok {
		return int(sig)
	}
	return 0
}
