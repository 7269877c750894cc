package cli

import "context"

// The commands that share plugins: keys, trust, indexes, upgrade.

// PluginsKeygenCmd is `runbox plugins keygen`.
type PluginsKeygenCmd struct {
	Out string `arg:"" optional:"" help:"Private key file to write (its public key goes to FILE.pub); default: signing-key.pem in the runbox config directory." placeholder:"FILE"`
}

// Run runs the command in runboxd.
func (c *PluginsKeygenCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsSignCmd is `runbox plugins sign`.
type PluginsSignCmd struct {
	Bundle string `arg:"" help:"Bundle directory or .tar.gz, signed in place." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Key    string `help:"Private key file (PEM PKCS#8); default: the one plugins keygen wrote." placeholder:"FILE"`
}

// Run runs the command in runboxd.
func (c *PluginsSignCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsTrustCmd is `runbox plugins trust ...`.
type PluginsTrustCmd struct {
	Add PluginsTrustAddCmd `cmd:"" help:"Trust bundles signed by a key."`
	Ls  PluginsTrustLsCmd  `cmd:"" help:"List the trusted keys."`
	Rm  PluginsTrustRmCmd  `cmd:"" help:"Stop trusting a key."`
}

// PluginsTrustAddCmd is `runbox plugins trust add`.
type PluginsTrustAddCmd struct {
	Key  string `arg:"" help:"Public key: a .pub/PEM file or base64." placeholder:"KEY-OR-FILE"`
	Name string `help:"Name for the key (default: the file's name)." placeholder:"NAME"`
}

// Run runs the command in runboxd.
func (c *PluginsTrustAddCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsTrustLsCmd is `runbox plugins trust ls`.
type PluginsTrustLsCmd struct{}

// Run runs the command in runboxd.
func (c *PluginsTrustLsCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsTrustRmCmd is `runbox plugins trust rm`.
type PluginsTrustRmCmd struct {
	Key string `arg:"" help:"The key's name or fingerprint." placeholder:"NAME"`
}

// Run runs the command in runboxd.
func (c *PluginsTrustRmCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsIndexCmd is `runbox plugins index ...`.
type PluginsIndexCmd struct {
	Add PluginsIndexAddCmd `cmd:"" help:"Add an index (a JSON file over HTTPS, or a path)."`
	Ls  PluginsIndexLsCmd  `cmd:"" help:"List the configured indexes."`
	Rm  PluginsIndexRmCmd  `cmd:"" help:"Remove an index."`
}

// PluginsIndexAddCmd is `runbox plugins index add`.
type PluginsIndexAddCmd struct {
	Name string `arg:"" help:"Name for the index." placeholder:"NAME"`
	URL  string `arg:"" help:"https:// URL or path of the index JSON." placeholder:"URL"`
}

// Run runs the command in runboxd.
func (c *PluginsIndexAddCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsIndexLsCmd is `runbox plugins index ls`.
type PluginsIndexLsCmd struct{}

// Run runs the command in runboxd.
func (c *PluginsIndexLsCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsIndexRmCmd is `runbox plugins index rm`.
type PluginsIndexRmCmd struct {
	Name string `arg:"" help:"The index's name." placeholder:"NAME"`
}

// Run runs the command in runboxd.
func (c *PluginsIndexRmCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsSearchCmd is `runbox plugins search`.
type PluginsSearchCmd struct {
	Words []string `arg:"" optional:"" help:"Words the name or description must hold (none: list all)." placeholder:"WORD"`
}

// Run runs the command in runboxd.
func (c *PluginsSearchCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }

// PluginsUpgradeCmd is `runbox plugins upgrade`.
type PluginsUpgradeCmd struct {
	Name          string   `arg:"" optional:"" help:"Bundle to upgrade (default: every installed bundle found in an index)." placeholder:"NAME"`
	Trusted       []string `help:"Also trust this public key for this upgrade. Repeatable." name:"trust" placeholder:"KEY"`
	AllowUnsigned bool     `help:"Install bundles that are unsigned or signed by an untrusted key (not with RUNBOX_REQUIRE_SIGNED)."`
}

// Run runs the command in runboxd.
func (c *PluginsUpgradeCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }
