package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/docker"
	"github.com/runbox/runbox/sandbox/process"
)

// superviseArg is the hidden first argument that makes runbox act as the
// supervisor of one process run (see sandbox/process).
const superviseArg = "__supervise"

func supervise(args []string) int { return process.SupervisorMain(args) }

// DaemonCmd is `runbox daemon`.
type DaemonCmd struct {
	IdleTimeout  time.Duration `help:"Exit after this long with no runs and no requests (0: never)." default:"0s" placeholder:"DUR"`
	MaxParallel  int           `help:"Runs at once; more wait in a FIFO queue (default: number of CPUs)." env:"RUNBOX_MAX_PARALLEL" placeholder:"N"`
	DefaultImage string        `help:"Image for docker runs that name none." env:"RUNBOX_IMAGE" default:"python:3.12-slim" placeholder:"IMAGE"`
	NoDocker     bool          `help:"Do not use Docker even when it is available." env:"RUNBOX_NO_DOCKER"`
	PluginIdle   time.Duration `help:"Unload plugins after this long with no runs (they reload from the compilation cache)." default:"30s" placeholder:"DUR"`
	Verbose      bool          `help:"Log debug detail." short:"v"`
}

// Run serves until idle or signalled.
func (c *DaemonCmd) Run(ctx context.Context, a *app) error {
	level := slog.LevelInfo
	if c.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon: find own binary: %w", err)
	}
	sbs := map[string]sandbox.Sandbox{
		sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{superviseArg}, Standby: true}),
	}
	if !c.NoDocker {
		sbs[sandbox.Docker] = docker.New(docker.Options{DefaultImage: c.DefaultImage})
	}
	judge := newJudge(log, c.PluginIdle)
	defer judge.Close()
	return daemon.Run(ctx, daemon.Options{
		Home: a.g.Home, Socket: host.SocketPath(a.g.Home), IdleTimeout: c.IdleTimeout,
		MaxParallel: c.MaxParallel, Version: version, Logger: log,
		Sandboxes: sbs, Judge: judge, DefaultImage: c.DefaultImage,
	})
}

// newJudge wires the built-in plugins and the user's plugin directory,
// with the compilation cache in the user's cache dir.
func newJudge(log *slog.Logger, idle time.Duration) *host.PluginJudge {
	return host.NewPluginJudge(func(ctx context.Context) (*plugins.Host, error) {
		return plugins.NewHost(ctx, plugins.Config{
			CacheDir: filepath.Join(host.CacheDir(), "wazero"),
			Dirs:     []string{host.PluginDir()},
			Logger:   log,
		})
	}, idle, log)
}
