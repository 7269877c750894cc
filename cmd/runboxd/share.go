package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/bundle"
)

// configDir holds what a user configures about sharing plugins: the trust
// store, the indexes, the default signing key and config.json. It follows
// RUNBOX_HOME like the plugins directory (a home is self-contained), else
// $XDG_CONFIG_HOME/runbox, else ~/.config/runbox.
func configDir() string {
	if h := os.Getenv("RUNBOX_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "runbox")
	}
	if d, err := os.UserHomeDir(); err == nil {
		return filepath.Join(d, ".config", "runbox")
	}
	return paths.Home()
}

func trustPath() string      { return filepath.Join(configDir(), "trusted-keys.json") }
func indexesPath() string    { return filepath.Join(configDir(), "indexes.json") }
func defaultKeyPath() string { return filepath.Join(configDir(), "signing-key.pem") }

// sharingConfig is config.json in configDir.
type sharingConfig struct {
	// RequireSigned refuses any bundle not signed by a trusted key, like
	// RUNBOX_REQUIRE_SIGNED=1.
	RequireSigned bool `json:"require_signed"`
}

func requireSigned() (bool, error) {
	pol, err := signedOnly()
	return pol != nil, err
}

// signedOnly is the policy that only signed plugins load, nil when the
// user did not ask for it: what install refuses, the plugin loader
// refuses too (a bundle installed unsigned before, a loose module).
func signedOnly() (*plugins.SignedOnly, error) {
	if v := os.Getenv("RUNBOX_REQUIRE_SIGNED"); v != "" && v != "0" && v != "false" {
		return &plugins.SignedOnly{Why: "RUNBOX_REQUIRE_SIGNED is set", Off: "unset RUNBOX_REQUIRE_SIGNED"}, nil
	}
	p := filepath.Join(configDir(), "config.json")
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	var c sharingConfig
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return nil, fmt.Errorf("config %s: %w", p, err)
	}
	if !c.RequireSigned {
		return nil, nil
	}
	return &plugins.SignedOnly{Why: "require_signed is set in " + p, Off: "set it to false there"}, nil
}

// loadPolicy is signedOnly with the trusted keys, for the plugin loader.
// A config or trust store it cannot read does not lift the policy: it
// fails closed (every user plugin refused, saying why).
func loadPolicy(log *slog.Logger) *plugins.SignedOnly {
	pol, err := signedOnly()
	if err != nil {
		log.Error("plugins: the signing policy could not be read: only the built-ins load", "err", err)
		return &plugins.SignedOnly{Why: fmt.Sprintf("the signing policy could not be read (%v)", err), Off: "fix the config"}
	}
	if pol == nil {
		return nil
	}
	ts, err := bundle.LoadTrust(trustPath())
	if err != nil {
		log.Error("plugins: the trusted keys could not be read: no bundle is trusted", "err", err)
	}
	pol.Trust = ts
	return pol
}

// installPolicy is the user's policy with this command's flags.
func installPolicy(extra []string, allowUnsigned bool) (bundle.Policy, error) {
	ts, err := bundle.LoadTrust(trustPath())
	if err != nil {
		return bundle.Policy{}, err
	}
	req, err := requireSigned()
	if err != nil {
		return bundle.Policy{}, err
	}
	p := bundle.Policy{Trust: ts, AllowUnsigned: allowUnsigned, RequireSigned: req, Names: pluginNames}
	for _, s := range extra {
		k, err := bundle.LoadPublicKey(s)
		if err != nil {
			return p, fmt.Errorf("--trust: %w", err)
		}
		p.Extra = append(p.Extra, k)
	}
	return p, nil
}

// pluginNames tells install the names of plugin modules (bundle.Policy.
// Names), loaded as the daemon loads them, with its compilation cache.
func pluginNames(mods map[string][]byte) (map[string]string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// Only what loading a module takes: the daemon's whole config would
	// read the signing policy and list the built-ins again, for nothing.
	cfg := plugins.Config{CacheDir: filepath.Join(paths.CacheDir(), "wazero"), Logger: slog.New(slog.DiscardHandler)}
	return plugins.ModuleNames(ctx, cfg, mods)
}

func pluginsKeygen(ctx context.Context, a *cli.App, c *cli.PluginsKeygenCmd) error {
	out := c.Out
	if out == "" {
		out = defaultKeyPath()
	}
	pub, err := bundle.GenerateKey(out)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(map[string]string{"private_key": out, "public_key": out + ".pub", "fingerprint": bundle.Fingerprint(pub)})
	}
	fmt.Printf("private key: %s (keep it secret)\npublic key:  %s (give it to those who install your bundles)\nfingerprint: %s\n\nnext:\n  runbox plugins pack DIR OUT.tar.gz --key %s\n  others: runbox plugins trust add %s.pub --name YOURNAME\n",
		out, out+".pub", bundle.Fingerprint(pub), out, out)
	return nil
}

func pluginsSign(ctx context.Context, a *cli.App, c *cli.PluginsSignCmd) error {
	keyFile := c.Key
	if keyFile == "" {
		keyFile = defaultKeyPath()
	}
	key, err := bundle.ReadPrivateKey(keyFile)
	if err != nil {
		return fmt.Errorf("sign: %w (make one with runbox plugins keygen, or pass --key)", err)
	}
	m, err := bundle.Sign(c.Bundle, key)
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(m)
	}
	fmt.Printf("signed %s %s (%s) with %s\n", m.Name, m.Version, c.Bundle, bundle.Fingerprint(key.Public().(ed25519.PublicKey)))
	return nil
}

func pluginsTrustAdd(ctx context.Context, a *cli.App, c *cli.PluginsTrustAddCmd) error {
	pub, err := bundle.LoadPublicKey(c.Key)
	if err != nil {
		return err
	}
	name := c.Name
	if name == "" {
		if _, serr := os.Stat(c.Key); serr != nil {
			return errors.New("trust add: give the key a --name")
		}
		name = strings.ToLower(strings.TrimSuffix(strings.TrimSuffix(filepath.Base(c.Key), ".pub"), ".pem"))
	}
	ts, err := bundle.LoadTrust(trustPath())
	if err != nil {
		return err
	}
	if err := ts.Add(name, pub); err != nil {
		return err
	}
	if !a.G.JSON {
		fmt.Printf("trusted %s: %s\n", name, bundle.Fingerprint(pub))
	}
	return nil
}

func pluginsTrustLs(ctx context.Context, a *cli.App, c *cli.PluginsTrustLsCmd) error {
	ts, err := bundle.LoadTrust(trustPath())
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(ts.Keys)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tFINGERPRINT\tADDED")
	for _, k := range ts.Keys {
		fmt.Fprintf(w, "%s\t%s\t%s\n", k.Name, k.Fingerprint, k.Added.Format("2006-01-02"))
	}
	return w.Flush()
}

func pluginsTrustRm(ctx context.Context, a *cli.App, c *cli.PluginsTrustRmCmd) error {
	ts, err := bundle.LoadTrust(trustPath())
	if err != nil {
		return err
	}
	k, err := ts.Remove(c.Key)
	if err != nil {
		return err
	}
	if !a.G.JSON {
		fmt.Printf("no longer trusted: %s (%s)\n", k.Name, k.Fingerprint)
	}
	return nil
}
