package host

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
	"github.com/runbox/runbox/sdk"
)

// applyAllowNet refuses what cannot be kept to a list, naming why: a
// Slurm job (no proxy on its nodes), a container given a network, the
// host network, entries that are not host names, a setup list without setup.
func TestApplyAllowNetRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		backend string
		req     api.RunRequest
		want    string
	}{
		{"slurm", sandbox.Slurm, api.RunRequest{AllowNet: []string{"pypi.org"}}, "Slurm job runs on the cluster's nodes"},
		{"docker with a network", sandbox.Docker, api.RunRequest{AllowNet: []string{"pypi.org"}, Network: "bridge"}, "--network bridge gives it the network"},
		{"host network", sandbox.Process, api.RunRequest{AllowNet: []string{"pypi.org"}, Network: "host"}, "choose one"},
		{"star", sandbox.Process, api.RunRequest{AllowNet: []string{"*"}}, "--network"},
		{"setup list without setup", sandbox.Process, api.RunRequest{SetupAllowNet: []string{"pypi.org"}}, "no --setup"},
		{"bad setup entry", sandbox.Process, api.RunRequest{Setup: []string{"true"}, SetupAllowNet: []string{"1.2.3.4"}}, "--setup-allow-net"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := sandbox.Spec{}
			err := applyAllowNet(&spec, tc.backend, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v, want one saying %q", err, tc.want)
			}
			if len(spec.AllowNet) > 0 {
				t.Errorf("spec got a list despite the refusal: %v", spec.AllowNet)
			}
		})
	}
}

// A process run with a list gets its network cut, at least.
func TestApplyAllowNetCutsTheNetwork(t *testing.T) {
	if err := confine.Probe().Can(confine.Net); err != nil {
		t.Skipf("this host cannot cut a run's network: %v", err)
	}
	spec := sandbox.Spec{ProcessOptions: sandbox.ProcessOptions{Isolate: "fs"}}
	if err := applyAllowNet(&spec, sandbox.Process, api.RunRequest{AllowNet: []string{"PyPI.org, *.pythonhosted.org"}}); err != nil {
		t.Fatal(err)
	}
	if spec.Isolate != "full" || strings.Join(spec.AllowNet, ",") != "pypi.org,*.pythonhosted.org" {
		t.Errorf("spec: isolate %q allow %v", spec.Isolate, spec.AllowNet)
	}
}

// The plan's proposal is applied to a process run, not under a critical
// risk, not over the user's own choice.
func TestProposeAllowNet(t *testing.T) {
	if err := confine.Probe().Can(confine.Net); err != nil {
		t.Skipf("this host cannot cut a run's network: %v", err)
	}
	out := sdk.PlanOutput{AllowNet: []sdk.AllowHost{{Host: "pypi.org", Reason: "pip install"}}}
	spec := sandbox.Spec{}
	if note := proposeAllowNet(&spec, sandbox.Process, api.RunRequest{}, out); spec.Isolate != "net" || len(spec.AllowNet) != 1 || !strings.Contains(note, "only pypi.org") {
		t.Errorf("applied: %q %v %q", spec.Isolate, spec.AllowNet, note)
	}
	for name, req := range map[string]api.RunRequest{
		"own list": {AllowNet: []string{"example.org"}}, "host network": {Network: "host"}, "isolate none": {Isolate: "none"},
	} {
		spec := sandbox.Spec{}
		proposeAllowNet(&spec, sandbox.Process, req, out)
		if len(spec.AllowNet) != 0 {
			t.Errorf("%s: the proposal overrode the request: %v", name, spec.AllowNet)
		}
	}
	crit := out
	crit.Risks = []sdk.Risk{{Severity: sdk.SeverityCritical, Code: "pipe-to-shell", Message: "x"}}
	spec = sandbox.Spec{}
	if proposeAllowNet(&spec, sandbox.Process, api.RunRequest{}, crit); len(spec.AllowNet) != 0 {
		t.Errorf("a critical plan got hosts: %v", spec.AllowNet)
	}
}
