package ui

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host/daemon/daemontest"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
)

// The tests run a real daemon in this process (a real store, the built-in
// plugins, the process sandbox: runs supervised by this test binary
// re-executed as "__supervise") and the dashboard as its client.
func TestMain(m *testing.M) { supervisortest.Main(m) }

type testEnv struct {
	c   *client.Client
	srv *Server
	url string
}

func startEnv(t testing.TB) *testEnv { return startEnvIn(t, t.TempDir()) }

// startEnvIn starts the daemon on home (a store may be there already).
func startEnvIn(t testing.TB, home string) *testEnv {
	t.Helper()
	c := daemontest.Start(t, daemontest.Options{Home: home, Plugins: true}).Client
	srv, err := Listen(c, Options{Poll: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sctx, scancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- srv.Serve(sctx) }()
	t.Cleanup(func() {
		scancel()
		if err := <-served; err != nil {
			t.Errorf("ui: %v", err)
		}
	})
	return &testEnv{c: c, srv: srv, url: srv.URL()}
}

// base is the server's address without the token.
func (e *testEnv) base() string { return "http://" + e.srv.ln.Addr().String() }

// train submits a run printing n steps of loss, pausing pause seconds
// after each.
func (e *testEnv) train(t testing.TB, name string, n int, pause string) *api.Run {
	t.Helper()
	script := `i=1; while [ $i -le ` + strconv.Itoa(n) + ` ]; do echo "##PROGRESS## {\"step\": $i, \"total\": ` + strconv.Itoa(n) + `, \"metrics\": {\"loss\": $(( 1000 / i ))}}"; sleep ` + pause + `; i=$((i+1)); done`
	r, err := e.c.Submit(context.Background(), api.RunRequest{
		Name: name, Command: []string{"sh", "-c", script}, Sandbox: sandbox.Process, Workdir: t.TempDir(), ClientEnv: os.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return r
}
