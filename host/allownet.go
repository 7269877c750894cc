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
	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/sandbox/runlog"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

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

// proposedAllowNet is the allow-list a plan proposes for its run: the
// hosts its planner found the command needs (out.AllowNet), checked like
// --allow-net, which the backend's admission applies or explains. None
// when the request names its own list, or when the plan found a critical
// risk (that run asks for full isolation and no host); note says why a
// proposal was dropped.
func proposedAllowNet(req api.RunRequest, out sdk.PlanOutput) (hosts []string, note string) {
	if len(out.AllowNet) == 0 || len(req.AllowNet) > 0 || len(req.SetupAllowNet) > 0 {
		return nil, ""
	}
	for _, h := range out.AllowNet {
		hosts = append(hosts, h.Host)
	}
	list, err := egress.Parse(hosts)
	if err != nil {
		return nil, "network: the planner proposed a host --allow-net refuses (" + err.Error() + "); none applied"
	}
	for _, r := range out.Risks {
		if r.Severity == sdk.SeverityCritical {
			return nil, ""
		}
	}
	return list.Strings(), ""
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
