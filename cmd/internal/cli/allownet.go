package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/runbox/runbox/api"
)

// AllowNetFlags keep a run to named hosts (run, plan, exec).
type AllowNetFlags struct {
	AllowNet      []string `name:"allow-net" help:"Let the run reach only these hosts, through an egress proxy (HTTP_PROXY/HTTPS_PROXY are set; nothing else gets out: no direct route, no DNS). HOST, *.SUFFIX or HOST:PORT (ports 80 and 443 otherwise); comma list, repeatable. Process runs (the network is then cut: --isolate net at least); refused for Slurm." placeholder:"HOST,..."`
	SetupAllowNet []string `name:"setup-allow-net" help:"The --setup commands' own allow-list (install, then go dark): with it alone, the command itself runs with no network." placeholder:"HOST,..."`
}

func (f AllowNetFlags) apply(req *api.RunRequest) {
	req.AllowNet, req.SetupAllowNet = f.AllowNet, f.SetupAllowNet
}

// printEgress is status's allow-net lines: the lists and what was refused.
func printEgress(w io.Writer, r *api.Run) {
	if len(r.Spec.AllowNet) > 0 {
		fmt.Fprintf(w, "allow-net:\t%s\n", strings.Join(r.Spec.AllowNet, ", "))
	}
	if len(r.Spec.SetupAllowNet) > 0 {
		fmt.Fprintf(w, "setup allow-net:\t%s\n", strings.Join(r.Spec.SetupAllowNet, ", "))
	}
	if e := r.Egress; e != nil {
		line := fmt.Sprintf("%d connections proxied", e.Proxied)
		if e.Summary != "" {
			line += "; " + e.Summary
		}
		fmt.Fprintf(w, "egress:\t%s\n", line)
	}
}

// printAllowNet is a plan's allow-list lines: each host the run may reach
// and why (the planner's reason, or "asked for").
func printAllowNet(w io.Writer, p *api.Plan) {
	why := map[string]string{}
	for _, h := range p.Result.AllowNet {
		why[h.Host] = h.Reason
	}
	for i, h := range p.Spec.AllowNet {
		label := ""
		if i == 0 {
			label = "allow-net:"
		}
		r := why[h]
		if r == "" {
			r = "asked for with --allow-net"
		}
		fmt.Fprintf(w, "%s\t%s — %s\n", label, h, r)
	}
}
