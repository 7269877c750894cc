package host

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// applyAllowNet puts --allow-net and --setup-allow-net into spec, after
// the isolation is settled: each entry checked (egress.Parse names the bad
// one), the backend able to keep the run to them, and a process run's
// network cut, since the proxy is then its only way out.
func applyAllowNet(spec *sandbox.Spec, backend string, req api.RunRequest) error {
	if len(req.AllowNet) == 0 && len(req.SetupAllowNet) == 0 {
		return nil
	}
	run, err := egress.Parse(req.AllowNet)
	if err != nil {
		return badRequest("%v", err)
	}
	setup, err := egress.Parse(req.SetupAllowNet)
	if err != nil {
		return badRequest("--setup-allow-net: %v", err)
	}
	if !setup.Empty() && len(req.Setup) == 0 && len(spec.Setup) == 0 {
		return badRequest("--setup-allow-net gives setup commands their network, but the run has no --setup")
	}
	switch backend {
	case sandbox.Slurm:
		return badRequest("--allow-net keeps a run to named hosts through a proxy on the machine that runs it; a Slurm job runs on the cluster's nodes, where runbox has no proxy: drop --allow-net (the cluster's own network policy applies), or run it with --sandbox process or docker")
	case sandbox.Docker:
		// The container has no network; its init carries connections to
		// a proxy outside (sandbox/docker/egress.go).
		if req.Network != "" && req.Network != "none" {
			return badRequest("--allow-net keeps the container to named hosts, --network %s gives it the network: choose one", req.Network)
		}
		spec.AllowNet, spec.SetupAllowNet = run.Strings(), setup.Strings()
		return nil
	}
	if req.Network == "host" {
		return badRequest("--allow-net keeps the run to named hosts, --network host gives it every host: choose one")
	}
	level, err := confine.ParseLevel(spec.Isolate)
	if err != nil {
		return badRequest("%v", err)
	}
	level = confine.Join(level, confine.Net)
	if err := confine.Probe().Can(level); err != nil {
		return badRequest("--allow-net needs the run's network cut (--isolate %s), which this host cannot enforce: %v", level, err)
	}
	spec.Isolate = string(level)
	spec.AllowNet, spec.SetupAllowNet = run.Strings(), setup.Strings()
	return nil
}

// allowNetFromSpec fills the request's allow-lists from a stored spec (a
// plan's, a retried run's) when the request gives none.
func allowNetFromSpec(req *api.RunRequest, s sandbox.Spec) {
	if len(req.AllowNet) == 0 {
		req.AllowNet = s.AllowNet
	}
	if len(req.SetupAllowNet) == 0 {
		req.SetupAllowNet = s.SetupAllowNet
	}
}

// EventEgressRefused is the event type of a connection the egress proxy
// refused; Data is {"host","port"} and Time when it was refused.
const EventEgressRefused = "egress_refused"

// egressEvent records a backend's note of a refused connection (the
// first to each host:port; status counts them all) as an event.
func (r *runner) egressEvent(ctx context.Context, rec runlog.Record) {
	rest, ok := strings.CutPrefix(string(rec.Data), egress.RefusedNote+" ")
	if !ok {
		return
	}
	rest = strings.TrimSpace(rest)
	hostport, _, _ := strings.Cut(rest, " ")
	host, port, _ := net.SplitHostPort(hostport)
	n, _ := strconv.Atoi(port)
	data, _ := json.Marshal(map[string]any{"host": host, "port": n})
	ev := store.Event{RunID: r.id, Time: rec.Time, Type: EventEgressRefused, Message: "refused " + rest, Data: data}
	if ev.Time.IsZero() {
		ev.Time = r.e.cfg.Now()
	}
	if _, err := r.e.cfg.Store.AppendEvent(ctx, ev); err != nil && ctx.Err() == nil {
		r.e.log.Warn("run: egress event", "run", r.id, "err", err)
	}
}

// proposeAllowNet gives a planned process run the hosts its planner found
// it needs (out.AllowNet) as its allow-list, when the request names none:
// the run then reaches those and nothing else. It does not when the plan
// found a critical risk (that run asks for full isolation and no host),
// when the run was given the host network or no isolation by name, or
// when this host cannot cut the network; it returns the plan's note on
// what it did.
func proposeAllowNet(spec *sandbox.Spec, backend string, req api.RunRequest, out sdk.PlanOutput) string {
	if len(out.AllowNet) == 0 || len(req.AllowNet) > 0 || len(req.SetupAllowNet) > 0 {
		return ""
	}
	var hosts []string
	for _, h := range out.AllowNet {
		hosts = append(hosts, h.Host)
	}
	list, err := egress.Parse(hosts)
	if err != nil {
		return "network: the planner proposed a host --allow-net refuses (" + err.Error() + "); none applied"
	}
	critical := false
	for _, r := range out.Risks {
		critical = critical || r.Severity == sdk.SeverityCritical
	}
	level, _ := confine.ParseLevel(spec.Isolate)
	switch {
	case critical:
		return "" // a critical risk: full isolation, no host
	case backend != sandbox.Process:
		return "network: the command needs " + strings.Join(list.Strings(), ", ") + " (an allow-list applies to process runs; this container gets --network as recommended)"
	case req.Network == "host" || req.Isolate == string(confine.None):
		return "network: the command needs " + strings.Join(list.Strings(), ", ") + "; not enforced, as the run was given the host network or --isolate none"
	}
	joined := confine.Join(level, confine.Net)
	if err := confine.Probe().Can(joined); err != nil {
		return "network: the command needs " + strings.Join(list.Strings(), ", ") + ", but this host cannot cut a run's network to enforce an allow-list (" + err.Error() + ")"
	}
	spec.Isolate, spec.AllowNet = string(joined), list.Strings()
	return "network: only " + strings.Join(list.Strings(), ", ") + ", through an egress proxy (what the command needs; --allow-net to change it)"
}

// containerEgressEvents records, as the run ends, the refusals of a
// container run's egress proxy (its helper writes only the report; a
// process run's supervisor notes each in the log, egressEvent): one event
// per refused host:port, at its first refusal, with the count.
func (r *runner) containerEgressEvents(ctx context.Context) {
	dir := filepath.Join(r.e.runDir(r.id), "sandbox")
	if _, err := os.Stat(filepath.Join(dir, egress.ListsFile)); err != nil {
		return // not a container run with --allow-net
	}
	rep, ok := egress.ReadReports(dir)
	if !ok {
		return
	}
	for _, b := range rep.Blocked {
		data, _ := json.Marshal(map[string]any{"host": b.Host, "port": b.Port, "count": b.Count})
		msg := fmt.Sprintf("refused %s (%s), %d times", net.JoinHostPort(b.Host, strconv.Itoa(b.Port)), b.Reason, b.Count)
		if _, err := r.e.cfg.Store.AppendEvent(ctx, store.Event{RunID: r.id, Time: b.First, Type: EventEgressRefused, Message: msg, Data: data}); err != nil && ctx.Err() == nil {
			r.e.log.Warn("run: egress event", "run", r.id, "err", err)
		}
	}
}
