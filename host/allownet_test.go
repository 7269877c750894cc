package host

import (
	"context"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/slurm"
	"github.com/runbox/runbox/sdk"
	"github.com/runbox/runbox/store"
)

// allowLists refuses entries that are not host names, naming them, and a
// setup list without setup; what it passes on to the backend's admission
// is the lists in canonical form. (What each backend admits: the Admit
// tests of sandbox/process, docker and slurm.)
func TestAllowListsRefusals(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  api.RunRequest
		want string
	}{
		{"star", api.RunRequest{AllowNet: []string{"*"}}, "--network"},
		{"setup list without setup", api.RunRequest{SetupAllowNet: []string{"pypi.org"}}, "no --setup"},
		{"bad setup entry", api.RunRequest{Setup: []string{"true"}, SetupAllowNet: []string{"1.2.3.4"}}, "--setup-allow-net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run, setup, err := allowLists(tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
			if len(run) > 0 || len(setup) > 0 {
				t.Errorf("lists passed on despite the refusal: %v %v", run, setup)
			}
		})
	}
	run, _, err := allowLists(api.RunRequest{AllowNet: []string{"PyPI.org, *.pythonhosted.org"}})
	if err != nil || strings.Join(run, ",") != "pypi.org,*.pythonhosted.org" {
		t.Errorf("allowLists: %v %v", run, err)
	}
}

// A backend's refusal of an allow-list reaches the caller as a bad
// request with its message as written, and creates no run: a Slurm job
// (no proxy on its nodes).
func TestAllowNetRefusedByTheBackend(t *testing.T) {
	te := newTestEngine(t, t.TempDir(), 2)
	te.cfg.Sandboxes[sandbox.Slurm] = slurm.New(slurm.Options{})
	req := processRequest(t, "true")
	req.Sandbox, req.AllowNet = sandbox.Slurm, []string{"pypi.org"}
	_, err := te.Submit(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "a Slurm job runs on the cluster's nodes, where runbox has no proxy") {
		t.Fatalf("Submit: %v, want the Slurm backend's refusal", err)
	}
	if runs, err := te.st.ListRuns(context.Background(), store.Filter{}); err != nil || len(runs) != 0 {
		t.Errorf("runs after the refusal: %v %v", runs, err)
	}
}

// The plan's proposal is passed to the backend checked and canonical; not
// over the user's own choice, not under a critical risk, and not when the
// planner names what --allow-net refuses (a note says so).
func TestProposedAllowNet(t *testing.T) {
	out := sdk.PlanOutput{AllowNet: []sdk.AllowHost{{Host: "PyPI.org", Reason: "pip install"}}}
	if hosts, note := proposedAllowNet(api.RunRequest{}, out); strings.Join(hosts, ",") != "pypi.org" || note != "" {
		t.Errorf("proposed: %v %q", hosts, note)
	}
	if hosts, _ := proposedAllowNet(api.RunRequest{AllowNet: []string{"example.org"}}, out); len(hosts) != 0 {
		t.Errorf("the proposal overrode the request's own list: %v", hosts)
	}
	crit := out
	crit.Risks = []sdk.Risk{{Severity: sdk.SeverityCritical, Code: "pipe-to-shell", Message: "x"}}
	if hosts, _ := proposedAllowNet(api.RunRequest{}, crit); len(hosts) != 0 {
		t.Errorf("a critical plan got hosts: %v", hosts)
	}
	bad := sdk.PlanOutput{AllowNet: []sdk.AllowHost{{Host: "10.1.2.3"}}}
	if hosts, note := proposedAllowNet(api.RunRequest{}, bad); len(hosts) != 0 || !strings.Contains(note, "none applied") {
		t.Errorf("an address proposed: %v %q", hosts, note)
	}
}
