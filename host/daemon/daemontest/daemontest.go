// Package daemontest runs a real daemon for the tests of what is built on
// it — the dashboard, the MCP server, runboxd's commands: a real store on a
// home of the test's, the process sandbox (runs supervised by the test
// binary re-executed as the supervisor: its TestMain must be
// supervisortest.Main) and, when asked, the built-in plugins. Only tests
// import it; host/daemon's own tests, inside the package, have theirs.
package daemontest

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// Options says what daemon to run.
type Options struct {
	// Home is the daemon's home (a store may be there already); a temp
	// dir of the test's when empty.
	Home string
	// Plugins runs the built-in plugins (progress, failures, plans);
	// without them runs are judged by exit status alone.
	Plugins bool
}

// Config is the daemon's configuration for home and socket, for a test
// that runs the daemon in a process of its own; close releases it.
func Config(home, socket string, withPlugins bool) (opts daemon.Options, close func(), err error) {
	exe, err := os.Executable()
	if err != nil {
		return daemon.Options{}, nil, err
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// This host's GPUs, as runboxd finds them (a bad RUNBOX_GPUS leaves
	// none, and --gpus is refused saying so).
	gpus, _ := gpu.Detect(context.Background(), os.Getenv)
	opts = daemon.Options{
		Home: home, Socket: socket, Version: "test", MaxParallel: 4, Logger: log, GPUs: gpus,
		Sandboxes: map[string]sandbox.Sandbox{
			sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{supervisor.Arg}, GPUs: gpus}),
		},
	}
	close = func() {}
	if withPlugins {
		judge := host.NewPluginJudge(func(ctx context.Context) (*plugins.Host, error) {
			return plugins.NewHost(ctx, plugins.Config{
				Builtins: Builtins(),
				// Kept between runs of one test binary: compiling the
				// modules is most of a cold start.
				CacheDir: filepath.Join(os.TempDir(), "runbox-test-wazero-"+filepath.Base(exe)), Logger: log,
			})
		}, time.Minute, log)
		opts.Judge, close = judge, judge.Close
	}
	return opts, close, nil
}

// Builtins are the built-in plugins as the plugin host takes them.
func Builtins() []plugins.Builtin {
	mods := builtin.Modules()
	out := make([]plugins.Builtin, len(mods))
	for i, m := range mods {
		out[i] = plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()}
	}
	return out
}

// Daemon is a daemon running in the test's process.
type Daemon struct {
	Home   string
	Client *client.Client
	stop   func()
}

// Start runs a daemon until Stop or the end of the test, and returns once
// it answers. At the end, runs still going are stopped first, so nothing
// outlives the test.
func Start(t testing.TB, o Options) *Daemon {
	t.Helper()
	if o.Home == "" {
		o.Home = t.TempDir()
	}
	sockDir, err := os.MkdirTemp("", "rbd")
	if err != nil {
		t.Fatal(err)
	}
	socket := filepath.Join(sockDir, "s")
	opts, release, err := Config(o.Home, socket, o.Plugins)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- daemon.Run(ctx, opts) }()
	d := &Daemon{Home: o.Home, Client: client.New(client.Options{Home: o.Home, Socket: socket})}
	var once sync.Once
	d.stop = func() {
		once.Do(func() {
			d.stopRuns()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("daemon: %v", err)
			}
			release()
			os.RemoveAll(sockDir)
		})
	}
	t.Cleanup(d.stop)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := d.Client.Health(context.Background()); err == nil {
			return d
		} else if time.Now().After(deadline) {
			t.Fatalf("daemon did not answer: %v", err)
		}
	}
}

// Stop ends the daemon (once; the end of the test does it otherwise).
func (d *Daemon) Stop() { d.stop() }

// stopRuns stops the runs still going and waits for their ends.
func (d *Daemon) stopRuns() {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	runs, err := d.Client.List(ctx, nil)
	if err != nil {
		return
	}
	for _, r := range runs {
		if !r.State.Terminal() {
			_, _ = d.Client.Stop(ctx, r.ID, time.Second)
			_, _ = d.Client.Wait(ctx, r.ID, 10*time.Second)
		}
	}
}
