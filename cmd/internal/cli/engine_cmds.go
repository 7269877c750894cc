package cli

import (
	"context"
	"time"
)

// PluginsCmd is `runbox plugins ...`.
type PluginsCmd struct {
	Ls      PluginsLsCmd      `cmd:"" help:"List the plugins runbox loads (built-in and installed)."`
	Info    PluginsInfoCmd    `cmd:"" help:"Show one plugin's manifest and health."`
	Test    PluginsTestCmd    `cmd:"" help:"Run a plugin against fixture files and diff the results."`
	New     PluginsNewCmd     `cmd:"" help:"Create a plugin project that builds and passes its own tests."`
	Install PluginsInstallCmd `cmd:"" help:"Install a plugin bundle (directory or .tar.gz) for this user."`
	Remove  PluginsRemoveCmd  `cmd:"" help:"Remove an installed plugin bundle."`
	Pack    PluginsPackCmd    `cmd:"" help:"Pack a directory of plugins into a bundle, optionally signed."`
	Verify  PluginsVerifyCmd  `cmd:"" help:"Check a bundle's checksums and signature."`
}

// PluginsLsCmd is `runbox plugins ls`.
type PluginsLsCmd struct{}

// Run runs the command in runboxd.
func (c *PluginsLsCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsInfoCmd is `runbox plugins info`.
type PluginsInfoCmd struct {
	Name string `arg:"" help:"Plugin name." placeholder:"NAME"`
}

// Run runs the command in runboxd.
func (c *PluginsInfoCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsInstallCmd is `runbox plugins install`.
type PluginsInstallCmd struct {
	Bundle  string   `arg:"" help:"Bundle directory or .tar.gz." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Trusted []string `help:"Require a signature by this ed25519 public key (base64). Repeatable." name:"trust" placeholder:"KEY"`
}

// Run runs the command in runboxd.
func (c *PluginsInstallCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsRemoveCmd is `runbox plugins remove`.
type PluginsRemoveCmd struct {
	Name string `arg:"" help:"Bundle name." placeholder:"NAME"`
}

// Run runs the command in runboxd.
func (c *PluginsRemoveCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsPackCmd is `runbox plugins pack`.
type PluginsPackCmd struct {
	Dir string `arg:"" help:"Directory holding runbox-bundle.json (name, version) and the .wasm files." type:"existingdir" placeholder:"DIR"`
	Out string `arg:"" help:"Output .tar.gz." placeholder:"OUT"`
	Key string `help:"Sign with this ed25519 private key file (base64 seed or key)." type:"existingfile" placeholder:"FILE"`
}

// Run runs the command in runboxd.
func (c *PluginsPackCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsVerifyCmd is `runbox plugins verify`.
type PluginsVerifyCmd struct {
	Bundle  string   `arg:"" help:"Bundle directory or .tar.gz." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Trusted []string `help:"Require a signature by this ed25519 public key (base64). Repeatable." name:"trust" placeholder:"KEY"`
}

// Run runs the command in runboxd.
func (c *PluginsVerifyCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsTestCmd is `runbox plugins test`.
type PluginsTestCmd struct {
	Plugin   string `arg:"" help:"The plugin's .wasm file." type:"existingfile" placeholder:"WASM"`
	Fixtures string `arg:"" optional:"" default:"testdata" help:"Directory of NAME.input.json + NAME.expected.json fixtures." placeholder:"DIR"`
}

// Run runs the command in runboxd.
func (c *PluginsTestCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsNewCmd is `runbox plugins new`.
type PluginsNewCmd struct {
	Kind string `help:"What the plugin does." enum:"classifier,progress,planner" required:""`
	Name string `arg:"" help:"Plugin name (also the directory created)." placeholder:"NAME"`
	Dir  string `help:"Where to create it (default: ./NAME)." placeholder:"DIR"`
}

// Run runs the command in runboxd.
func (c *PluginsNewCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// DaemonCmd is `runbox daemon`.
type DaemonCmd struct {
	IdleTimeout    time.Duration `help:"Exit after this long with no runs and no requests (0: never)." default:"0s" placeholder:"DUR"`
	MaxParallel    int           `help:"Runs at once; more wait in a FIFO queue (default: number of CPUs)." env:"RUNBOX_MAX_PARALLEL" placeholder:"N"`
	DefaultImage   string        `help:"Image for docker runs that name none." env:"RUNBOX_IMAGE" default:"python:3.12-slim" placeholder:"IMAGE"`
	NoDocker       bool          `help:"Do not use Docker even when it is available." env:"RUNBOX_NO_DOCKER"`
	DockerPool     int           `help:"Warm containers kept per kind of docker run (same image, limits and workspace); 0 turns the pool off." env:"RUNBOX_DOCKER_POOL" default:"2" placeholder:"N"`
	DockerPoolIdle time.Duration `help:"Remove a kind's warm containers after this long without a run of that kind." env:"RUNBOX_DOCKER_POOL_IDLE" default:"2m" placeholder:"DUR"`
	DockerPids     int64         `help:"Pids limit of containers whose run sets none (negative: none)." env:"RUNBOX_DOCKER_PIDS" default:"4096" placeholder:"N"`
	PluginIdle     time.Duration `help:"Unload plugins after this long with no runs (they reload from the compilation cache)." default:"30s" placeholder:"DUR"`
	Verbose        bool          `help:"Log debug detail." short:"v"`
}

// Run runs the daemon (in runboxd).
func (c *DaemonCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }
