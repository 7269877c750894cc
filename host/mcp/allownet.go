package mcp

import "github.com/runbox/runbox/api"

// allowNetView is the plan's allow-list (what a run of it gets), each
// host with the planner's reason, or "asked for" when the agent gave it.
func allowNetView(p *api.Plan) []allowHost {
	why := map[string]string{}
	for _, h := range p.Result.AllowNet {
		why[h.Host] = h.Reason
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
