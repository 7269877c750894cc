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
	"time"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/authoring"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/sdk"
)

// builtinPlugins hands the embedded plugins to the runtime, with what is
// known of each without loading it.
func builtinPlugins() []plugins.Builtin {
	mods := builtin.Modules()
	out := make([]plugins.Builtin, len(mods))
	for i, m := range mods {
		out[i] = plugins.Builtin{Name: m.Name, Kind: m.Kind, Wasm: m.Wasm, Manifest: m.Manifest()}
	}
	return out
}

// pluginsLs lists plugins.
func pluginsLs(ctx context.Context, a *cli.App, c *cli.PluginsLsCmd) error {
	infos, err := loadInfos(ctx)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(infos)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tKINDS\tSTATUS\tSOURCE\tWHY")
	for _, i := range infos {
		kinds := make([]string, len(i.Kinds))
		for k, v := range i.Kinds {
			kinds[k] = string(v)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\n", i.Name, i.Version, strings.Join(kinds, ","), i.Status, i.Source, why(i))
	}
	return w.Flush()
}

// why says, for a plugin that is not ready, why and what happens next.
func why(i plugins.Info) string {
	switch i.Status {
	case plugins.StatusOff:
		return fmt.Sprintf("switched off, retried after %s: %s", i.RetryAt.Local().Format(time.DateTime), i.OffReason)
	case plugins.StatusFailed:
		return "not loaded: " + i.LastError
	}
	return ""
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

// pluginsInfo shows one plugin.
func pluginsInfo(ctx context.Context, a *cli.App, c *cli.PluginsInfoCmd) error {
	infos, err := loadInfos(ctx)
	if err != nil {
		return err
	}
	for _, i := range infos {
		if i.Name != c.Name {
			continue
		}
		if a.G.JSON {
			return a.PrintJSON(i)
		}
		w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintf(w, "name:\t%s\nversion:\t%s\nkinds:\t%v\nstatus:\t%s\nsource:\t%s\nsha256:\t%s\n", i.Name, i.Version, i.Kinds, i.Status, i.Source, i.SHA256)
		if s := why(i); s != "" {
			fmt.Fprintf(w, "why:\t%s\n", s)
		}
		if i.Description != "" {
			fmt.Fprintf(w, "description:\t%s\n", i.Description)
		}
		if len(i.Frameworks) > 0 {
			fmt.Fprintf(w, "frameworks:\t%s\n", strings.Join(i.Frameworks, ", "))
		}
		if len(i.Prefilter) > 0 {
			fmt.Fprintf(w, "prefilter:\t%q\n", i.Prefilter)
		}
		if n := len(i.PrefilterConfirm); n > 0 {
			fmt.Fprintf(w, "prefilter confirm:\t%d patterns around the literals (--json lists them)\n", n)
		}
		fmt.Fprintf(w, "priority:\t%d\ncalls:\t%d (%d failed)\n", i.Priority, i.Calls, i.Failures)
		if i.LastError != "" {
			fmt.Fprintf(w, "last error:\t%s\n", i.LastError)
		}
		return w.Flush()
	}
	return fmt.Errorf("no plugin named %q (see runbox plugins ls)", c.Name)
}

// pluginsInstall installs a bundle.
func pluginsInstall(ctx context.Context, a *cli.App, c *cli.PluginsInstallCmd) error {
	keys, err := publicKeys(c.Trusted)
	if err != nil {
		return err
	}
	m, err := bundle.Install(c.Bundle, paths.PluginDir(), keys...)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(m)
	}
	fmt.Printf("installed %s %s (%d plugin file(s)) into %s\n", m.Name, m.Version, len(m.Plugins), paths.PluginDir())
	return nil
}

// pluginsRemove removes a bundle.
func pluginsRemove(ctx context.Context, a *cli.App, c *cli.PluginsRemoveCmd) error {
	if err := bundle.Remove(paths.PluginDir(), c.Name); err != nil {
		return err
	}
	if !a.G.JSON {
		fmt.Printf("removed %s\n", c.Name)
	}
	return nil
}

// pluginsPack packs a bundle.
func pluginsPack(ctx context.Context, a *cli.App, c *cli.PluginsPackCmd) error {
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
	m, err := bundle.Pack(c.Dir, c.Out, key)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(m)
	}
	fmt.Printf("packed %s %s into %s\n", m.Name, m.Version, c.Out)
	if key != nil {
		fmt.Printf("public key: %s\n", base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey)))
	}
	return nil
}

// pluginsVerify verifies a bundle.
func pluginsVerify(ctx context.Context, a *cli.App, c *cli.PluginsVerifyCmd) error {
	keys, err := publicKeys(c.Trusted)
	if err != nil {
		return err
	}
	m, err := bundle.Verify(c.Bundle, keys)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(m)
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

// pluginsTest runs the fixtures; it fails when any fixture does not match.
func pluginsTest(ctx context.Context, a *cli.App, c *cli.PluginsTestCmd) error {
	rep, err := authoring.RunFixtures(ctx, c.Plugin, c.Fixtures)
	if err != nil {
		return err
	}
	if a.G.JSON {
		if err := a.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		fmt.Print(rep.String())
	}
	if rep.Failed > 0 {
		return cli.ExitCode(1)
	}
	return nil
}

// pluginsNew scaffolds a plugin project.
func pluginsNew(ctx context.Context, a *cli.App, c *cli.PluginsNewCmd) error {
	dir := c.Dir
	if dir == "" {
		dir = c.Name
	}
	runbox := ""
	if sib, _, err := cli.Sibling("runbox"); err == nil {
		runbox = sib
	}
	if err := authoring.Scaffold(dir, sdk.Kind(c.Kind), c.Name, runbox); err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(map[string]string{"dir": dir, "kind": c.Kind, "name": c.Name})
	}
	fmt.Printf("created %s plugin %q in %s\n\nnext:\n  cd %s\n  make            # builds %s.wasm\n  make test       # runs its fixtures (runbox plugins test)\n  cp %s.wasm %s/  # use it: runbox analyze / runbox run pick it up\n",
		c.Kind, c.Name, dir, dir, c.Name, c.Name, paths.PluginDir())
	return nil
}
