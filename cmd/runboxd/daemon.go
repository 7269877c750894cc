package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/docker"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/slurm"
)

// runDaemon serves until idle or signalled.
func runDaemon(ctx context.Context, a *cli.App, c *cli.DaemonCmd) error {
	level := slog.LevelInfo
	if c.Verbose {
		level = slog.LevelDebug
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	exe, err := supervisorExe()
	if err != nil {
		return err
	}
	gpus, err := gpu.Detect(ctx, os.Getenv)
	if err != nil {
		log.Error("daemon: GPUs", "err", err) // none handed out: runs asking are refused with this
	}
	sbs := map[string]sandbox.Sandbox{
		sandbox.Process: process.New(process.Options{Exe: exe, Args: []string{cli.SuperviseArg}, Standby: true, GPUs: gpus}),
	}
	if !c.NoDocker {
		// The same static runbox is each container's init; the warm pool's
		// boxes live in the home, beside the run logs linked into them.
		d := docker.New(docker.Options{
			DefaultImage: c.DefaultImage, Home: a.G.Home, Exe: exe,
			DefaultPids: c.DockerPids, PoolSize: c.DockerPool, PoolIdle: c.DockerPoolIdle,
			PoolDir: filepath.Join(a.G.Home, "docker-pool"), GPUs: gpus,
		})
		defer d.Close() // an idle daemon exits, and takes its warm containers with it
		sbs[sandbox.Docker] = d
	}
	missing := map[string]string{}
	if slurm.Configured() { // sbatch on PATH or SLURM_RESTD_URL set
		sbs[sandbox.Slurm] = slurm.New(slurm.Options{})
	} else {
		missing[sandbox.Slurm] = slurm.NotConfigured
	}
	if c.NoDocker {
		missing[sandbox.Docker] = "this daemon was started with --no-docker"
	}
	judge := newJudge(log, c.PluginIdle)
	defer judge.Close()
	return daemon.Run(ctx, daemon.Options{
		Home: a.G.Home, Socket: paths.SocketPath(a.G.Home), IdleTimeout: c.IdleTimeout,
		MaxParallel: c.MaxParallel, Version: cli.Version, Logger: log,
		Sandboxes: sbs, Missing: missing, Judge: judge, DefaultImage: c.DefaultImage, GPUs: gpus,
	})
}

// supervisorExe is the binary re-executed as each process run's
// supervisor: the runbox next to this runboxd, whose start-up is a fraction
// of runboxd's and whose resident size is a third, else runboxd itself
// (both carry the supervisor).
func supervisorExe() (string, error) {
	sib, self, err := cli.Sibling("runbox")
	switch {
	case err == nil:
		return sib, nil
	case self == "":
		return "", fmt.Errorf("daemon: %w", err)
	}
	return self, nil
}

// newJudge wires the built-in plugins and the user's plugin directory,
// with the compilation cache in the user's cache dir.
func newJudge(log *slog.Logger, idle time.Duration) *host.PluginJudge {
	return host.NewPluginJudge(func(ctx context.Context) (*plugins.Host, error) {
		return plugins.NewHost(ctx, pluginConfig(log))
	}, idle, log)
}

// pluginConfig is where the daemon and analyze find plugins and keep
// their compilation cache.
func pluginConfig(log *slog.Logger) plugins.Config {
	return plugins.Config{
		Builtins: builtinPlugins(),
		CacheDir: filepath.Join(paths.CacheDir(), "wazero"),
		Dirs:     []string{paths.PluginDir()},
		Logger:   log,
		// Which plugins the breaker switched off: plugins ls shows it.
		StateFile: filepath.Join(paths.Home(), "plugin-state.json"),
		// require_signed holds at load, not only at install.
		RequireSigned: loadPolicy(log),
	}
}
