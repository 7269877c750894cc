package main

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/sdk"
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

// Run lists plugins.
func (c *PluginsLsCmd) Run(ctx context.Context, a *app) error {
	infos, err := loadInfos(ctx)
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(infos)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tKINDS\tSTATUS\tSOURCE")
	for _, i := range infos {
		kinds := make([]string, len(i.Kinds))
		for k, v := range i.Kinds {
			kinds[k] = string(v)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", i.Name, i.Version, strings.Join(kinds, ","), i.Status, i.Source)
	}
	return w.Flush()
}

func loadInfos(ctx context.Context) ([]plugins.Info, error) {
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	judge := newJudge(log, 0)
	defer judge.Close()
	infos := judge.Plugins(ctx)
	if infos == nil {
		return nil, fmt.Errorf("plugins could not be loaded (see the warning above)")
	}
	return infos, nil
}

// PluginsInfoCmd is `runbox plugins info`.
type PluginsInfoCmd struct {
	Name string `arg:"" help:"Plugin name." placeholder:"NAME"`
}

// Run shows one plugin.
func (c *PluginsInfoCmd) Run(ctx context.Context, a *app) error {
	infos, err := loadInfos(ctx)
	if err != nil {
		return err
	}
	for _, i := range infos {
		if i.Name != c.Name {
			continue
		}
		if a.g.JSON {
			return a.printJSON(i)
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "name:\t%s\nversion:\t%s\nkinds:\t%v\nstatus:\t%s\nsource:\t%s\nsha256:\t%s\n", i.Name, i.Version, i.Kinds, i.Status, i.Source, i.SHA256)
		if i.Description != "" {
			fmt.Fprintf(w, "description:\t%s\n", i.Description)
		}
		if len(i.Frameworks) > 0 {
			fmt.Fprintf(w, "frameworks:\t%s\n", strings.Join(i.Frameworks, ", "))
		}
		if len(i.Prefilter) > 0 {
			fmt.Fprintf(w, "prefilter:\t%q\n", i.Prefilter)
		}
		fmt.Fprintf(w, "priority:\t%d\ncalls:\t%d (%d failed)\n", i.Priority, i.Calls, i.Failures)
		if i.LastError != "" {
			fmt.Fprintf(w, "last error:\t%s\n", i.LastError)
		}
		return w.Flush()
	}
	return fmt.Errorf("no plugin named %q (see runbox plugins ls)", c.Name)
}

// PluginsInstallCmd is `runbox plugins install`.
type PluginsInstallCmd struct {
	Bundle  string   `arg:"" help:"Bundle directory or .tar.gz." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Trusted []string `help:"Require a signature by this ed25519 public key (base64). Repeatable." name:"trust" placeholder:"KEY"`
}

// Run installs a bundle.
func (c *PluginsInstallCmd) Run(a *app) error {
	keys, err := publicKeys(c.Trusted)
	if err != nil {
		return err
	}
	m, err := plugins.Install(c.Bundle, host.PluginDir(), keys...)
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(m)
	}
	fmt.Printf("installed %s %s (%d plugin file(s)) into %s\n", m.Name, m.Version, len(m.Plugins), host.PluginDir())
	return nil
}

// PluginsRemoveCmd is `runbox plugins remove`.
type PluginsRemoveCmd struct {
	Name string `arg:"" help:"Bundle name." placeholder:"NAME"`
}

// Run removes a bundle.
func (c *PluginsRemoveCmd) Run(a *app) error {
	if err := plugins.Remove(host.PluginDir(), c.Name); err != nil {
		return err
	}
	if !a.g.JSON {
		fmt.Printf("removed %s\n", c.Name)
	}
	return nil
}

// PluginsPackCmd is `runbox plugins pack`.
type PluginsPackCmd struct {
	Dir string `arg:"" help:"Directory holding runbox-bundle.json (name, version) and the .wasm files." type:"existingdir" placeholder:"DIR"`
	Out string `arg:"" help:"Output .tar.gz." placeholder:"OUT"`
	Key string `help:"Sign with this ed25519 private key file (base64 seed or key)." type:"existingfile" placeholder:"FILE"`
}

// Run packs a bundle.
func (c *PluginsPackCmd) Run(a *app) error {
	var key ed25519.PrivateKey
	if c.Key != "" {
		b, err := os.ReadFile(c.Key)
		if err != nil {
			return err
		}
		raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(b)))
		if err != nil {
			return fmt.Errorf("--key: not base64: %w", err)
		}
		switch len(raw) {
		case ed25519.SeedSize:
			key = ed25519.NewKeyFromSeed(raw)
		case ed25519.PrivateKeySize:
			key = ed25519.PrivateKey(raw)
		default:
			return fmt.Errorf("--key: want a %d-byte seed or %d-byte key, got %d bytes", ed25519.SeedSize, ed25519.PrivateKeySize, len(raw))
		}
	}
	m, err := plugins.Pack(c.Dir, c.Out, key)
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(m)
	}
	fmt.Printf("packed %s %s into %s\n", m.Name, m.Version, c.Out)
	if key != nil {
		fmt.Printf("public key: %s\n", base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)))
	}
	return nil
}

// PluginsVerifyCmd is `runbox plugins verify`.
type PluginsVerifyCmd struct {
	Bundle  string   `arg:"" help:"Bundle directory or .tar.gz." type:"existingfile|existingdir" placeholder:"BUNDLE"`
	Trusted []string `help:"Require a signature by this ed25519 public key (base64). Repeatable." name:"trust" placeholder:"KEY"`
}

// Run verifies a bundle.
func (c *PluginsVerifyCmd) Run(a *app) error {
	keys, err := publicKeys(c.Trusted)
	if err != nil {
		return err
	}
	m, err := plugins.Verify(c.Bundle, keys)
	if err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(m)
	}
	signed := "unsigned"
	if m.Signature != "" {
		signed = "signed"
	}
	fmt.Printf("ok: %s %s, %d plugin file(s), %s\n", m.Name, m.Version, len(m.Plugins), signed)
	return nil
}

func publicKeys(in []string) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	for _, s := range in {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil || len(b) != ed25519.PublicKeySize {
			return nil, fmt.Errorf("--trust %q: want a base64 ed25519 public key", s)
		}
		keys = append(keys, ed25519.PublicKey(b))
	}
	return keys, nil
}

// PluginsTestCmd is `runbox plugins test`.
type PluginsTestCmd struct {
	Plugin   string `arg:"" help:"The plugin's .wasm file." type:"existingfile" placeholder:"WASM"`
	Fixtures string `arg:"" optional:"" default:"testdata" help:"Directory of NAME.input.json + NAME.expected.json fixtures." placeholder:"DIR"`
}

// PluginsNewCmd is `runbox plugins new`.
type PluginsNewCmd struct {
	Kind string `help:"What the plugin does." enum:"classifier,progress,planner" required:""`
	Name string `arg:"" help:"Plugin name (also the directory created)." placeholder:"NAME"`
	Dir  string `help:"Where to create it (default: ./NAME)." placeholder:"DIR"`
}

// Run runs the fixtures; it fails when any fixture does not match.
func (c *PluginsTestCmd) Run(ctx context.Context, a *app) error {
	rep, err := plugins.RunFixtures(ctx, c.Plugin, c.Fixtures)
	if err != nil {
		return err
	}
	if a.g.JSON {
		if err := a.printJSON(rep); err != nil {
			return err
		}
	} else {
		fmt.Print(rep.String())
	}
	if rep.Failed > 0 {
		return exitError{code: 1}
	}
	return nil
}

// Run scaffolds a plugin project.
func (c *PluginsNewCmd) Run(a *app) error {
	dir := c.Dir
	if dir == "" {
		dir = c.Name
	}
	if err := plugins.Scaffold(dir, sdk.Kind(c.Kind), c.Name); err != nil {
		return err
	}
	if a.g.JSON {
		return a.printJSON(map[string]string{"dir": dir, "kind": c.Kind, "name": c.Name})
	}
	fmt.Printf("created %s plugin %q in %s\n\nnext:\n  cd %s\n  make            # builds %s.wasm\n  make test       # runs its fixtures (runbox plugins test)\n  cp %s.wasm %s/  # use it: runbox analyze / runbox run pick it up\n",
		c.Kind, c.Name, dir, dir, c.Name, c.Name, host.PluginDir())
	return nil
}
