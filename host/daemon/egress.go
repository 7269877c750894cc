package daemon

import (
	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/egress"
	"github.com/runbox/runbox/sdk"
)

// egressView is what a run's egress proxy did, from the reports its
// backend leaves in the state dir (written as refusals come, so a live
// run's status is current within a second); nil for a run without
// --allow-net or before its proxy started.
func egressView(s sandbox.Spec) *api.Egress {
	if len(s.AllowNet)+len(s.SetupAllowNet) == 0 || s.StateDir == "" {
		return nil
	}
	r, ok := egress.ReadReports(s.StateDir)
	if !ok {
		return nil
	}
	v := &api.Egress{Proxied: r.Proxied, Refused: r.Refused, Summary: r.Summary()}
	for _, b := range r.Blocked {
		v.Blocked = append(v.Blocked, api.EgressBlocked(b))
	}
	return v
}

func allowHostsView(hs []sdk.AllowHost) []api.AllowHost {
	var out []api.AllowHost
	for _, h := range hs {
		out = append(out, api.AllowHost(h))
	}
	return out
}
