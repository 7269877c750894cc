package mcp

import "github.com/runbox/runbox/api"

// allowNetView is the plan's allow-list (what a run of it gets), each
// host with the planner's reason, or "asked for" when the agent gave it.
func allowNetView(p *api.Plan) []allowHost {
	why := map[string]string{}
	for _, h := range p.Result.AllowNet {
		why[h.Host] = mcpText(h.Reason)
	}
	var out []allowHost
	for _, h := range p.Spec.AllowNet {
		r := why[h]
		if r == "" {
			r = "asked for (backend_data.recommendations.allow_net)"
		}
		out = append(out, allowHost{Host: h, Reason: r})
	}
	return out
}

type egressOut struct {
	AllowNet []string `json:"allow_net" jsonschema:"the hosts the run may reach"`
	Proxied  int64    `json:"proxied" jsonschema:"connections forwarded"`
	Refused  int64    `json:"refused" jsonschema:"connections refused"`
	Summary  string   `json:"summary,omitempty" jsonschema:"e.g. blocked 3 connections: example.org:443"`
}

// egressView is a run's allow-list and what its proxy did; nil without one.
func egressView(r *api.Run) *egressOut {
	if len(r.Spec.AllowNet)+len(r.Spec.SetupAllowNet) == 0 {
		return nil
	}
	out := &egressOut{AllowNet: r.Spec.AllowNet}
	if out.AllowNet == nil {
		out.AllowNet = []string{}
	}
	if e := r.Egress; e != nil {
		out.Proxied, out.Refused, out.Summary = e.Proxied, e.Refused, mcpText(e.Summary)
	}
	return out
}
