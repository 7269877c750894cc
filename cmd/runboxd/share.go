package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/internal/paths"
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
	if v := os.Getenv("RUNBOX_REQUIRE_SIGNED"); v != "" && v != "0" && v != "false" {
		return true, nil
	}
	p := filepath.Join(configDir(), "config.json")
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	var c sharingConfig
	if err == nil {
		err = json.Unmarshal(b, &c)
	}
	if err != nil {
		return false, fmt.Errorf("config %s: %w", p, err)
	}
	return c.RequireSigned, nil
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
	p := bundle.Policy{Trust: ts, AllowUnsigned: allowUnsigned, RequireSigned: req}
	for _, s := range extra {
		k, err := bundle.LoadPublicKey(s)
		if err != nil {
			return p, fmt.Errorf("--trust: %w", err)
		}
		p.Extra = append(p.Extra, k)
	}
	return p, nil
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
