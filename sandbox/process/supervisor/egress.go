package supervisor

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/sandbox/process/confine"
)

// maxEgressNotes bounds the log lines refusals write: the first refusal
// of each host:port is told, up to this many; the rest are counted in the
// report (status).
const maxEgressNotes = 50

// egressFor starts the egress proxy a step gets under --allow-net (the
// setup's own list under --setup-allow-net) and returns the step's
// environment pointing at it, and how to stop it. The proxy listens on
// 127.0.0.1 inside the run's network namespace and dials from this
// process's; with no list the step gets no proxy (and, its network cut,
// no network). The report is written to the state dir as refusals come
// (at most once a second) and when the step ends.
func (s *supervisor) egressFor(env []string, setup bool) ([]string, func(), error) {
	hosts, name := s.spec.AllowNet, egress.ReportFile
	if setup {
		name = egress.SetupReportFile
		if len(s.spec.SetupAllowNet) > 0 {
			hosts = s.spec.SetupAllowNet
		}
	}
	if len(hosts) == 0 {
		return env, func() {}, nil
	}
	list, err := egress.Parse(hosts)
	if err != nil {
		return env, nil, confineError(err)
	}
	if s.spec.EgressBridge != "" {
		return s.egressBridge(env, setup, list)
	}
	if level, _ := confine.ParseLevel(s.spec.Isolate); !level.Network() {
		return env, nil, confineError(fmt.Errorf("--allow-net needs the run's network cut (--isolate net or full), got %q", s.spec.Isolate))
	}
	l, err := confine.ListenInRunNet()
	if err != nil {
		return env, nil, confineError(fmt.Errorf("--allow-net: %w", err))
	}
	var mu sync.Mutex
	told := map[string]bool{}
	var lastWrite time.Time
	p := &egress.Proxy{Allow: list, Hosts: egress.ResolveFromEnv()}
	p.OnRefuse = func(r egress.Refusal) {
		key := fmt.Sprintf("%s:%d", r.Host, r.Port)
		mu.Lock()
		tell := !told[key] && len(told) < maxEgressNotes
		told[key] = true
		write := time.Since(lastWrite) > time.Second
		if write {
			lastWrite = time.Now()
		}
		mu.Unlock()
		if tell {
			s.note("%s %s (%s)", egress.RefusedNote, key, r.Reason)
		}
		if write {
			_ = egress.WriteReport(s.stateDir, name, p.Report())
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Serve(ctx, l); close(done) }()
	addr := l.Addr().String()
	what := "the command"
	if setup {
		what = "setup"
	}
	s.note("allow-net (%s): %s, through a proxy at %s; no other network", what, strings.Join(list.Strings(), ", "), addr)
	out := proxyEnv(env, addr)
	stop := func() {
		cancel()
		<-done
		_ = egress.WriteReport(s.stateDir, name, p.Report())
	}
	return out, stop, nil
}

// proxyEnv is env with the proxy variables pointing at addr (the run's
// own would point past the proxy).
func proxyEnv(env []string, addr string) []string {
	out := make([]string, 0, len(env)+8)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		switch strings.ToUpper(k) {
		case "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY":
			continue
		}
		out = append(out, kv)
	}
	return append(out, egress.Env(addr)...)
}

// egressBridge is egressFor in a container (the supervisor is its init):
// the container has no network; a listener on its loopback carries each
// connection to the proxy outside, over a unix socket in the box.
func (s *supervisor) egressBridge(env []string, setup bool, list egress.List) ([]string, func(), error) {
	sock, what := egress.BridgeSocket, "the command"
	if setup {
		sock, what = egress.SetupBridgeSocket, "setup"
	}
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return env, nil, confineError(fmt.Errorf("--allow-net: %w", err))
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { egress.Bridge(ctx, l, filepath.Join(s.spec.EgressBridge, sock)); close(done) }()
	addr := l.Addr().String()
	s.note("allow-net (%s): %s, through a proxy at %s (outside the container, which has no network)", what, strings.Join(list.Strings(), ", "), addr)
	return proxyEnv(env, addr), func() { cancel(); <-done }, nil
}
