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
	Install PluginsInstallCmd `cmd:"" help:"Install a plugin bundle (directory, .tar.gz, or NAME[@VERSION] from an index) for this user."`
	Upgrade PluginsUpgradeCmd `cmd:"" help:"Upgrade installed bundles to the newest version in the indexes."`
	Remove  PluginsRemoveCmd  `cmd:"" help:"Remove an installed plugin bundle."`
	Search  PluginsSearchCmd  `cmd:"" help:"Search the configured indexes for bundles."`
	Index   PluginsIndexCmd   `cmd:"" help:"Configure the indexes bundles are installed from."`
	Pack    PluginsPackCmd    `cmd:"" help:"Pack a directory of plugins into a bundle, optionally signed."`
	Sign    PluginsSignCmd    `cmd:"" help:"Sign a bundle with a private key."`
	Verify  PluginsVerifyCmd  `cmd:"" help:"Check a bundle's checksums and say who signed it."`
	Keygen  PluginsKeygenCmd  `cmd:"" help:"Make a key pair for signing bundles."`
	Trust   PluginsTrustCmd   `cmd:"" help:"Manage the keys whose bundles you trust."`
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
	Bundle        string   `arg:"" help:"Bundle directory or .tar.gz, or NAME[@VERSION] from a configured index." placeholder:"BUNDLE"`
	Trusted       []string `help:"Also trust this public key (PEM or base64, or a key file) for this install. Repeatable." name:"trust" placeholder:"KEY"`
	AllowUnsigned bool     `help:"Install a bundle that is unsigned or signed by an untrusted key (not with RUNBOX_REQUIRE_SIGNED)."`
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
	Key string `help:"Sign with this ed25519 private key file (PEM PKCS#8, as plugins keygen or openssl genpkey -algorithm ed25519 write)." type:"existingfile" placeholder:"FILE"`
}

// Run runs the command in runboxd.
func (c *PluginsPackCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsVerifyCmd is `runbox plugins verify`.
type PluginsVerifyCmd struct {
	Bundle  string   `arg:"" help:"Bundle directory or .tar.gz." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Trusted []string `help:"Also trust this public key (PEM or base64, or a key file). Repeatable." name:"trust" placeholder:"KEY"`
}

// Run runs the command in runboxd.
func (c *PluginsVerifyCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsTestCmd is `runbox plugins test`.
type PluginsTestCmd struct {
	Plugin   string `arg:"" help:"The plugin's .wasm file, or a NAME.rules.json rules file." type:"existingfile" placeholder:"WASM"`
	Fixtures string `arg:"" optional:"" default:"testdata" help:"Directory of NAME.input.json + NAME.expected.json fixtures." placeholder:"DIR"`
}

// Run runs the command in runboxd.
func (c *PluginsTestCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsNewCmd is `runbox plugins new`.
type PluginsNewCmd struct {
	Kind  string `help:"What the plugin does: classifier, progress or planner (not with --rules)." placeholder:"KIND"`
	Rules bool   `help:"A rules file instead of a WebAssembly plugin: progress formats and failure signatures as data, no toolchain needed."`
	Name  string `arg:"" help:"Plugin name (also the directory created)." placeholder:"NAME"`
	Dir   string `help:"Where to create it (default: ./NAME)." placeholder:"DIR"`
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
