package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/plugins/bundle"
)

// shareCmd runs the plugin-sharing commands; ok is false for any other.
func shareCmd(ctx context.Context, a *cli.App, cmd any) (ok bool, err error) {
	switch c := cmd.(type) {
	case *cli.PluginsKeygenCmd:
		return true, pluginsKeygen(ctx, a, c)
	case *cli.PluginsSignCmd:
		return true, pluginsSign(ctx, a, c)
	case *cli.PluginsTrustAddCmd:
		return true, pluginsTrustAdd(ctx, a, c)
	case *cli.PluginsTrustLsCmd:
		return true, pluginsTrustLs(ctx, a, c)
	case *cli.PluginsTrustRmCmd:
		return true, pluginsTrustRm(ctx, a, c)
	case *cli.PluginsIndexAddCmd:
		return true, pluginsIndexAdd(ctx, a, c)
	case *cli.PluginsIndexLsCmd:
		return true, pluginsIndexLs(ctx, a, c)
	case *cli.PluginsIndexRmCmd:
		return true, pluginsIndexRm(ctx, a, c)
	case *cli.PluginsSearchCmd:
		return true, pluginsSearch(ctx, a, c)
	case *cli.PluginsUpgradeCmd:
		return true, pluginsUpgrade(ctx, a, c)
	}
	return false, nil
}

func pluginsIndexAdd(ctx context.Context, a *cli.App, c *cli.PluginsIndexAddCmd) error {
	if err := bundle.CheckName(c.Name); err != nil {
		return fmt.Errorf("index add: %w", err)
	}
	refs, err := bundle.LoadIndexes(indexesPath())
	if err != nil {
		return err
	}
	ref := bundle.IndexRef{Name: c.Name, URL: c.URL}
	// Fetch it once now: a typo is better found here than at install.
	ix, err := bundle.Fetcher{}.FetchIndex(ctx, ref)
	if err != nil {
		return fmt.Errorf("index add: %w", err)
	}
	kept := refs[:0]
	for _, r := range refs {
		if r.Name != c.Name {
			kept = append(kept, r)
		}
	}
	if err := bundle.SaveIndexes(indexesPath(), append(kept, ref)); err != nil {
		return err
	}
	if !a.G.JSON {
		fmt.Printf("added index %s (%s): %d bundle version(s)\n", c.Name, c.URL, len(ix.Bundles))
	}
	return nil
}

func pluginsIndexLs(ctx context.Context, a *cli.App, c *cli.PluginsIndexLsCmd) error {
	refs, err := bundle.LoadIndexes(indexesPath())
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(refs)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tURL")
	for _, r := range refs {
		fmt.Fprintf(w, "%s\t%s\n", r.Name, r.URL)
	}
	return w.Flush()
}

func pluginsIndexRm(ctx context.Context, a *cli.App, c *cli.PluginsIndexRmCmd) error {
	refs, err := bundle.LoadIndexes(indexesPath())
	if err != nil {
		return err
	}
	kept := refs[:0]
	for _, r := range refs {
		if r.Name != c.Name {
			kept = append(kept, r)
		}
	}
	if len(kept) == len(refs) {
		return fmt.Errorf("index rm: no index named %q (runbox plugins index ls)", c.Name)
	}
	return bundle.SaveIndexes(indexesPath(), kept)
}

// allEntries fetches every configured index. An index that cannot be
// fetched fails the command: answering from the others could install an
// older version than the user has been offered.
func allEntries(ctx context.Context) ([]bundle.IndexEntry, error) {
	refs, err := bundle.LoadIndexes(indexesPath())
	if err != nil {
		return nil, err
	}
	if len(refs) == 0 {
		return nil, errors.New("no plugin index configured: add one with runbox plugins index add NAME URL")
	}
	var out []bundle.IndexEntry
	for _, r := range refs {
		ix, err := bundle.Fetcher{}.FetchIndex(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, ix.Bundles...)
	}
	return out, nil
}

func pluginsSearch(ctx context.Context, a *cli.App, c *cli.PluginsSearchCmd) error {
	entries, err := allEntries(ctx)
	if err != nil {
		return err
	}
	found := bundle.Search(entries, c.Words)
	if a.G.JSON {
		return a.PrintJSON(found)
	}
	w := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tVERSION\tINDEX\tDESCRIPTION")
	for _, e := range found {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.Name, e.Version, e.Index, e.Description)
	}
	return w.Flush()
}

// installFromIndex installs NAME[@VERSION] from the configured indexes.
func installFromIndex(ctx context.Context, spec string, pol bundle.Policy) (bundle.Manifest, bundle.Signature, error) {
	name, version, _ := strings.Cut(spec, "@")
	if strings.ContainsRune(spec, os.PathSeparator) || strings.HasSuffix(spec, ".tar.gz") || strings.HasSuffix(spec, ".tgz") {
		return bundle.Manifest{}, bundle.Signature{}, fmt.Errorf("install %s: no such bundle file or directory", spec)
	}
	if err := bundle.CheckName(name); err != nil {
		return bundle.Manifest{}, bundle.Signature{}, fmt.Errorf("install %s: not a bundle file or directory, nor a NAME[@VERSION]: %w", spec, err)
	}
	entries, err := allEntries(ctx)
	if err != nil {
		return bundle.Manifest{}, bundle.Signature{}, fmt.Errorf("install %s: %w", spec, err)
	}
	e, err := bundle.Find(entries, name, version)
	if err != nil {
		return bundle.Manifest{}, bundle.Signature{}, err
	}
	return bundle.Fetcher{}.InstallEntry(ctx, e, paths.PluginDir(), pol)
}

// pluginsUpgrade installs, for each installed bundle (or the one named),
// the newest version the indexes list when it is newer. Each bundle is
// replaced only once its download has passed every check.
func pluginsUpgrade(ctx context.Context, a *cli.App, c *cli.PluginsUpgradeCmd) error {
	pol, err := installPolicy(c.Trusted, c.AllowUnsigned)
	if err != nil {
		return err
	}
	have, err := bundle.List(paths.PluginDir())
	if err != nil {
		return err
	}
	entries, err := allEntries(ctx)
	if err != nil {
		return err
	}
	var done []installed
	var errs []error
	seen := false
	for _, m := range have {
		if c.Name != "" && m.Name != c.Name {
			continue
		}
		seen = true
		e, err := bundle.Find(entries, m.Name, "")
		if err != nil {
			if c.Name != "" {
				errs = append(errs, err)
			}
			continue
		}
		if bundle.CompareVersions(e.Version, m.Version) <= 0 {
			if !a.G.JSON {
				fmt.Printf("%s %s is the newest\n", m.Name, m.Version)
			}
			continue
		}
		nm, sig, err := bundle.Fetcher{}.InstallEntry(ctx, e, paths.PluginDir(), pol)
		if err != nil {
			errs = append(errs, fmt.Errorf("%w (%s %s stays installed)", err, m.Name, m.Version))
			continue
		}
		done = append(done, installed{nm, sig.String()})
		if !a.G.JSON {
			fmt.Printf("upgraded %s %s -> %s (%s)\n", m.Name, m.Version, nm.Version, sig)
		}
	}
	if c.Name != "" && !seen {
		errs = append(errs, fmt.Errorf("upgrade: %s is not installed (runbox plugins install %s)", c.Name, c.Name))
	}
	if a.G.JSON {
		if err := a.PrintJSON(done); err != nil {
			return err
		}
	}
	return errors.Join(errs...)
}
