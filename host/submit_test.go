package host

import (
	"reflect"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

func TestResolveEnv(t *testing.T) {
	client := []string{"PATH=/bin", "HOME=/root", "TOKEN=x"}
	for _, tc := range []struct {
		name string
		req  api.RunRequest
		want []string
	}{
		{"inherit", api.RunRequest{ClientEnv: client}, client},
		{"override", api.RunRequest{ClientEnv: client, Env: []string{"HOME=/tmp", "NEW=1"}},
			[]string{"PATH=/bin", "HOME=/tmp", "TOKEN=x", "NEW=1"}},
		{"clean", api.RunRequest{ClientEnv: client, CleanEnv: true, Env: []string{"A=b"}}, []string{"A=b"}},
		{"clean allow", api.RunRequest{ClientEnv: client, CleanEnv: true, EnvAllow: []string{"PATH", "MISSING"}},
			[]string{"PATH=/bin"}},
		{"value with =", api.RunRequest{CleanEnv: true, Env: []string{"URL=a=b"}}, []string{"URL=a=b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveEnv(tc.req)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
	if _, err := resolveEnv(api.RunRequest{Env: []string{"=x"}}); err == nil {
		t.Error("an env entry without a name was accepted")
	}
}

func TestFingerprint(t *testing.T) {
	for _, tc := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"python3", "train.py", "--lr", "0.1"}, "python3 train.py"},
		{[]string{"/usr/bin/python3", "-u", "train.py"}, "python3 train.py"},
		{[]string{"python", "-m", "mlx_lm.lora", "--iters", "5"}, "python -m mlx_lm.lora"},
		{[]string{"./run.sh"}, "run.sh"},
		{nil, ""},
	} {
		if got := Fingerprint(tc.cmd); got != tc.want {
			t.Errorf("Fingerprint(%q) = %q, want %q", tc.cmd, got, tc.want)
		}
	}
}

func TestStateOf(t *testing.T) {
	for _, tc := range []struct {
		exit  sandbox.Exit
		smoke bool
		want  store.State
	}{
		{sandbox.Exit{Code: 0}, false, store.Succeeded},
		{sandbox.Exit{Code: 2}, false, store.Failed},
		{sandbox.Exit{Code: 143, TimedOut: true}, false, store.TimedOut},
		{sandbox.Exit{Code: 143, TimedOut: true}, true, store.Failed}, // a smoke timeout fails the run
		{sandbox.Exit{Code: 143, Cancelled: true}, false, store.Cancelled},
		{sandbox.Exit{Lost: true}, false, store.Lost},
		{sandbox.Exit{Code: 0, Error: "image missing"}, false, store.Failed},
	} {
		if got := stateOf(tc.exit, tc.smoke); got != tc.want {
			t.Errorf("stateOf(%+v, smoke=%v) = %s, want %s", tc.exit, tc.smoke, got, tc.want)
		}
	}
}

func TestFallbackFailure(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"cancelled", "cancelled", "CANCELLED"},
		{"timeout", "timeout", "TIMEOUT"},
		{"sandbox", "sandbox", "SANDBOX_ERROR"},
		{"smoke wraps", "smoke", "SMOKE_FAILED"},
		{"nothing known", "", "NONZERO_EXIT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := cancelledInput
			in.Cancelled = tc.in == "cancelled"
			in.TimedOut = tc.in == "timeout"
			in.SandboxError = map[bool]string{true: "docker down"}[tc.in == "sandbox"]
			in.Smoke = tc.in == "smoke"
			if got := fallbackFailure(in).Code; got != tc.want {
				t.Errorf("code %s, want %s", got, tc.want)
			}
		})
	}
}

func TestFillFromSpec(t *testing.T) {
	stored := sandbox.Spec{
		Command: []string{"python3", "train.py"}, Workdir: "/w", ContainerOptions: sandbox.ContainerOptions{Image: "img"},
		Env: []string{"MODE=fast", "API_TOKEN=" + store.Redacted}, CleanEnv: true, EnvAllow: []string{"HOME"},
		Setup: []string{"pip list"}, Assets: []sandbox.Asset{{Src: "/d", Dst: "d"}}, StdinFile: "/in",
		Limits: sandbox.Limits{MemoryBytes: 1 << 30, CPUs: 2, Pids: 64}, Network: "bridge", GPUs: "all",
	}
	// A stored secret must be given again.
	req := api.RunRequest{}
	if err := fillFromSpec(&req, stored, "plan p1"); err == nil {
		t.Fatal("a redacted secret was replayed")
	}
	// Given again, everything else comes from the stored spec; what the
	// request says wins.
	req = api.RunRequest{Env: []string{"API_TOKEN=s3cret"}, Limits: api.Limits{MemoryBytes: 2 << 30}}
	if err := fillFromSpec(&req, stored, "plan p1"); err != nil {
		t.Fatal(err)
	}
	want := api.RunRequest{
		Command: stored.Command, Workdir: "/w", Image: "img",
		Env: []string{"MODE=fast", "API_TOKEN=" + store.Redacted, "API_TOKEN=s3cret"}, CleanEnv: true, EnvAllow: []string{"HOME"},
		Setup: stored.Setup, Assets: []api.Asset{{Src: "/d", Dst: "d"}}, StdinFile: "/in",
		Limits: api.Limits{MemoryBytes: 2 << 30, CPUs: 2, Pids: 64}, Network: "bridge", GPUs: "all",
	}
	if !reflect.DeepEqual(req, want) {
		t.Errorf("got  %+v\nwant %+v", req, want)
	}
	// resolveEnv lets the later value win, so the secret reaches the run.
	env, err := resolveEnv(req)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(env, []string{"MODE=fast", "API_TOKEN=s3cret"}) {
		t.Errorf("env %v", env)
	}
}
