package ui

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
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
	sockDir, err := os.MkdirTemp("", "rbu")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	socket := filepath.Join(sockDir, "s")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	judge := host.NewPluginJudge(func(ctx context.Context) (*plugins.Host, error) {
		var bs []plugins.Builtin
		for _, m := range builtin.Modules() {
			bs = append(bs, plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()})
		}
		return plugins.NewHost(ctx, plugins.Config{Builtins: bs, CacheDir: filepath.Join(os.TempDir(), "runbox-ui-test-wazero"), Logger: log})
	}, time.Minute, log)
	t.Cleanup(judge.Close)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- daemon.Run(ctx, daemon.Options{
			Home: home, Socket: socket, Version: "test", MaxParallel: 4, Judge: judge, Logger: log,
			Sandboxes: map[string]sandbox.Sandbox{
				sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{"__supervise"}}),
			},
		})
	}()
	c := client.New(client.Options{Home: home, Socket: socket})
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer scancel()
		if runs, err := c.List(sctx, nil); err == nil {
			for _, r := range runs {
				if !r.State.Terminal() {
					_, _ = c.Stop(sctx, r.ID, time.Second)
					_, _ = c.Wait(sctx, r.ID, 10*time.Second)
				}
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Errorf("daemon: %v", err)
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		if _, err := c.Health(context.Background()); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
