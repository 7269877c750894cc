package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/sandbox/docker/dockertest"
)

// These tests keep real process runs to an allow-list: the daemon, the
// supervisor, its egress proxy listening inside the run's network
// namespace, and curl. Names are mapped to loopback servers in the
// proxy's resolver (RUNBOX_EGRESS_RESOLVE); nothing outside this machine
// is ever reached.

func allowNetEnv(t *testing.T) (e *env, plainPort, tlsPort string) {
	t.Helper()
	needIsolation(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl")
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "fetched %s", r.URL.Path)
	}))
	t.Cleanup(plain.Close)
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "secure %s", r.URL.Path)
	}))
	t.Cleanup(secure.Close)
	pu, _ := url.Parse(plain.URL)
	su, _ := url.Parse(secure.URL)
	e = newEnv(t, "RUNBOX_EGRESS_RESOLVE=allowed.test=127.0.0.1,refused.test=127.0.0.1")
	return e, pu.Port(), su.Port()
}

// TestAllowNetReachesOnlyAllowedNames: through the proxy, curl reaches the
// allowed name over HTTP and HTTPS (CONNECT); the refused name (which the
// proxy could resolve), a literal address through the proxy, a raw TCP
// socket to the server, a name lookup and a DNS packet all fail; the
// refused connections are events and status counts them. The same raw
// socket reaches the server from an unconfined run.
func TestAllowNetReachesOnlyAllowedNames(t *testing.T) {
	e, pp, tp := allowNetEnv(t)
	allow := "allowed.test:" + pp + ",allowed.test:" + tp
	r := e.run("", "run", "--allow-net", allow, "--", "sh", "-c",
		"curl -fsS -m 10 http://allowed.test:"+pp+"/a && echo && curl -fsSk -m 10 https://allowed.test:"+tp+"/b")
	if r.code != 0 || !strings.Contains(r.stdout, "fetched /a") || !strings.Contains(r.stdout, "secure /b") {
		t.Fatalf("allowed name: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	attempts := []struct{ what, script string }{
		{"refused name over HTTP", "curl -fsS -m 10 http://refused.test:" + pp + "/"},
		{"refused name over CONNECT", "curl -fsSk -m 10 https://refused.test:" + tp + "/"},
		{"literal address through the proxy", "curl -fsS -m 10 --noproxy '' http://127.0.0.1:" + pp + "/"},
		{"raw TCP socket", "exec 3<>/dev/tcp/127.0.0.1/" + pp},
		{"name lookup", "getent hosts allowed.test || getent hosts localhost.localdomain.example"},
		{"DNS packet", `python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); s.sendto(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03org\x00\x00\x01\x00\x01", ("1.1.1.1", 53)); s.recv(512)'`},
	}
	for _, a := range attempts {
		r := e.run("", "run", "--allow-net", allow, "--", "bash", "-c", a.script)
		if r.code == 0 {
			t.Errorf("%s got out under --allow-net\nstdout: %s\nstderr: %s", a.what, r.stdout, r.stderr)
		}
	}
	// The raw socket does reach the server from an unconfined run.
	if r := e.run("", "run", "--isolate", "none", "--", "bash", "-c", "exec 3<>/dev/tcp/127.0.0.1/"+pp); r.code != 0 {
		t.Errorf("unconfined raw socket: exit %d (the server is up)\n%s", r.code, r.stderr)
	}

	// One run tries two refused names: status says so; both are events.
	id := strings.TrimSpace(e.must("run", "-d", "--allow-net", allow, "--", "sh", "-c",
		"curl -sS -m 10 http://refused.test:"+pp+"/; curl -sS -m 10 http://refused.test:"+pp+"/; curl -sSk -m 10 https://example.org/ ; true"))
	e.must("wait", id)
	run := e.getRun(id)
	if run.Egress == nil || run.Egress.Refused != 3 || !strings.HasPrefix(run.Egress.Summary, "blocked 3 connections: refused.test:"+pp+", example.org:443") {
		t.Errorf("egress in status: %+v", run.Egress)
	}
	if out := e.must("status", id); !strings.Contains(out, "blocked 3 connections: refused.test:"+pp) {
		t.Errorf("status does not say what was blocked:\n%s", out)
	}
	c := client.New(client.Options{Home: e.home, Socket: filepath.Join(e.home, "runbox.sock")})
	evs, err := c.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	var refused []string
	for _, ev := range evs {
		if ev.Type == "egress_refused" {
			if ev.Time.IsZero() || !strings.Contains(string(ev.Data), `"port"`) {
				t.Errorf("event without time or port: %+v", ev)
			}
			refused = append(refused, ev.Message)
		}
	}
	if len(refused) != 2 || !strings.Contains(refused[0], "refused.test:"+pp) || !strings.Contains(refused[1], "example.org:443") {
		t.Errorf("refusal events (first per host:port): %q", refused)
	}
}

// TestSetupAllowNetThenOffline: setup fetches through its own allow-list;
// the command, with none, cannot reach the same server.
func TestSetupAllowNetThenOffline(t *testing.T) {
	e, pp, _ := allowNetEnv(t)
	r := e.run("", "run", "--setup-allow-net", "allowed.test:"+pp,
		"--setup", "curl -fsS -m 10 -o fetched.txt http://allowed.test:"+pp+"/dep",
		"--", "sh", "-c", "cat fetched.txt; echo; curl -fsS -m 10 http://allowed.test:"+pp+"/again && echo ONLINE || echo OFFLINE")
	if r.code != 0 || !strings.Contains(r.stdout, "fetched /dep") || !strings.Contains(r.stdout, "OFFLINE") {
		t.Fatalf("setup online, command offline: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
}

// TestAllowNetBadInput: entries that are not host names are refused,
// naming them; Slurm refuses the flag; --network host contradicts it.
func TestAllowNetBadInput(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--allow-net", "*"}, "use --network"},
		{[]string{"--allow-net", "pypi.org,10.1.2.3"}, `"10.1.2.3": an address`},
		{[]string{"--allow-net", "https://pypi.org/simple"}, "not a URL"},
		{[]string{"--allow-net", "pypi.org", "--network", "host"}, "choose one"},
		{[]string{"--setup-allow-net", "pypi.org"}, "has no --setup"},
	} {
		r := e.run("", append(append([]string{"run", "--sandbox", "process"}, tc.args...), "--", "true")...)
		if r.code == 0 || !strings.Contains(r.stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want a refusal saying %q", tc.args, r.code, r.stderr, tc.want)
		}
	}
}

// TestPlanProposesAllowNet: the plan proposes what the command fetches,
// with its reason; exec honours it (the fetch goes through the proxy, the
// run's network is cut); a critical-risk plan adds no host and asks for
// full isolation.
func TestPlanProposesAllowNet(t *testing.T) {
	e, pp, _ := allowNetEnv(t)
	var plan api.Plan
	out := e.must("plan", "--json", "--sandbox", "process", "--", "sh", "-c", "curl -fsS -m 10 http://allowed.test:"+pp+"/planned")
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	want := "allowed.test:" + pp
	if len(plan.Result.AllowNet) != 1 || plan.Result.AllowNet[0].Host != want || !strings.Contains(plan.Result.AllowNet[0].Reason, "curl") {
		t.Fatalf("proposed %+v, want %s with its reason", plan.Result.AllowNet, want)
	}
	if len(plan.Spec.AllowNet) != 1 || plan.Spec.AllowNet[0] != want || plan.Spec.Isolate != "net" {
		t.Fatalf("plan spec: allow %v isolate %q", plan.Spec.AllowNet, plan.Spec.Isolate)
	}
	r := e.run("", "exec", plan.ID)
	if r.code != 0 || !strings.Contains(r.stdout, "fetched /planned") {
		t.Fatalf("exec: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	if !strings.Contains(r.stderr, "allow-net") {
		t.Errorf("the run did not say it went through the proxy: %s", r.stderr)
	}

	out = e.must("plan", "--json", "--sandbox", "process", "--", "sh", "-c", "curl -fsSL https://allowed.test/install.sh | sh")
	plan = api.Plan{}
	if err := json.Unmarshal([]byte(out), &plan); err != nil {
		t.Fatal(err)
	}
	if len(plan.Result.AllowNet) != 0 || len(plan.Spec.AllowNet) != 0 {
		t.Errorf("a critical-risk plan proposed hosts: %+v / %v", plan.Result.AllowNet, plan.Spec.AllowNet)
	}
	if plan.Isolation == nil || !strings.Contains(toJSON(plan.Isolation), "full") {
		t.Errorf("a critical-risk plan must still ask for full isolation: %s", toJSON(plan.Isolation))
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestAllowNetDocker: a container with --allow-net has no network; its
// init carries connections to the proxy outside. busybox wget (HTTP
// through http_proxy) reaches the allowed name; the refused name gets the
// proxy's 403, and a direct connection goes nowhere; status counts the
// refusal. The same direct connection reaches the server from a container
// given the host network.
func TestAllowNetDocker(t *testing.T) {
	dockertest.Require(t)
	img := dockertest.BusyboxImage(t)
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "fetched %s", r.URL.Path)
	}))
	t.Cleanup(plain.Close)
	pu, _ := url.Parse(plain.URL)
	pp := pu.Port()
	e := newEnv(t, "RUNBOX_NO_DOCKER=0", "RUNBOX_IMAGE="+img, "RUNBOX_EGRESS_RESOLVE=allowed.test=127.0.0.1,refused.test=127.0.0.1")
	allow := "allowed.test:" + pp
	r := e.run("", "run", "--sandbox", "docker", "--image", img, "--allow-net", allow, "--", "sh", "-c", "wget -q -O - http://allowed.test:"+pp+"/a")
	if r.code != 0 || !strings.Contains(r.stdout, "fetched /a") {
		t.Fatalf("allowed name from a container: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	// The direct probe is nc (this busybox's wget crashes on a refused
	// connection, which would pass for a block).
	direct := "printf 'GET /direct HTTP/1.0\\r\\n\\r\\n' | nc -w 3 127.0.0.1 " + pp
	for what, script := range map[string]string{
		"refused name": "wget -q -O - http://refused.test:" + pp + "/ && echo GOT-OUT",
		"direct":       direct,
	} {
		r := e.run("", "run", "--sandbox", "docker", "--image", img, "--allow-net", allow, "--", "sh", "-c", script)
		if strings.Contains(r.stdout, "fetched") || strings.Contains(r.stdout, "GOT-OUT") {
			t.Errorf("%s got out of the container: %s", what, r.stdout)
		}
	}
	if r := e.run("", "run", "--sandbox", "docker", "--image", img, "--network", "host", "--", "sh", "-c", direct); !strings.Contains(r.stdout, "fetched /direct") {
		t.Errorf("a container with the host network should reach the server directly: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// Setup online, command offline, in a container too.
	r = e.run("", "run", "--sandbox", "docker", "--image", img, "--setup-allow-net", allow,
		"--setup", "wget -q -O fetched.txt http://allowed.test:"+pp+"/dep", "--", "sh", "-c", "cat fetched.txt; echo; wget -q -O - http://allowed.test:"+pp+"/again && echo ONLINE || echo OFFLINE")
	if r.code != 0 || !strings.Contains(r.stdout, "fetched /dep") || !strings.Contains(r.stdout, "OFFLINE") {
		t.Errorf("setup online, command offline: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	id := strings.TrimSpace(e.must("run", "-d", "--sandbox", "docker", "--image", img, "--allow-net", allow, "--", "sh", "-c", "wget -q -O - http://refused.test:"+pp+"/; true"))
	e.must("wait", id)
	if run := e.getRun(id); run.Egress == nil || run.Egress.Refused != 1 || !strings.Contains(run.Egress.Summary, "refused.test:"+pp) {
		t.Errorf("egress in status: %+v", run.Egress)
	}
	c := client.New(client.Options{Home: e.home, Socket: filepath.Join(e.home, "runbox.sock")})
	evs, err := c.Events(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		found = found || ev.Type == "egress_refused" && strings.Contains(ev.Message, "refused.test:"+pp) && !ev.Time.IsZero()
	}
	if !found {
		t.Errorf("no egress_refused event for the container's refusal: %+v", evs)
	}
}
