package mcp

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/process/confine"
)

// TestAllowNetThroughMCP: compute_plan takes an allow-list in
// backend_data.recommendations.allow_net and returns it; local_execute
// honours it (the allowed name is fetched through the proxy, another is
// refused); local_status reports the refusal. Names map to a loopback
// server in the proxy's resolver only.
func TestAllowNetThroughMCP(t *testing.T) {
	if err := confine.Probe().Can(confine.Net); err != nil {
		t.Skipf("this host cannot cut a run's network: %v", err)
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "fetched-through-proxy") }))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	port := u.Port()
	t.Setenv("RUNBOX_EGRESS_RESOLVE", "allowed.test=127.0.0.1,refused.test=127.0.0.1")
	d := startDaemon(t)
	a := newAgent(t, d, t.TempDir())
	var p planOut
	a.ok("compute_plan", map[string]any{"backend": "local", "command": "curl -fsS -m 10 http://allowed.test:" + port + "/ && echo && curl -sS -m 10 http://refused.test:" + port + "/",
		"backend_data": map[string]any{"recommendations": map[string]any{"sandbox": "process", "allow_net": []string{"allowed.test:" + port}}}}, &p)
	if len(p.AllowNet) != 1 || p.AllowNet[0].Host != "allowed.test:"+port || p.AllowNet[0].Reason == "" {
		t.Fatalf("plan allow_net: %+v", p.AllowNet)
	}
	var e executeOut
	a.ok("local_execute", map[string]any{"plan_id": p.PlanID}, &e)
	r := a.waitDone(e.RunID)
	var l logsOut
	a.ok("local_logs", map[string]any{"run_id": e.RunID, "stream": "stdout"}, &l)
	if r.State != "succeeded" || !strings.Contains(l.Text, "fetched-through-proxy") || !strings.Contains(l.Text, "not in --allow-net") {
		t.Fatalf("run %s, output %q", r.State, l.Text)
	}
	var st runOut
	text := a.ok("local_status", map[string]any{"run_id": e.RunID}, &st)
	if st.Egress == nil || st.Egress.Refused != 1 || !strings.Contains(st.Egress.Summary, "refused.test:"+port) || !strings.Contains(text, "blocked 1 connection") {
		t.Errorf("status egress %+v; text %q", st.Egress, text)
	}
}
