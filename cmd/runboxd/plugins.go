package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
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
		if i.Name != "" { // loaded, described, then failed: its name is not unique
			return "not used: " + i.LastError
		}
		return "not loaded: " + i.LastError
	case plugins.StatusRefused:
		return i.LastError // "unsigned: ...": the status says refused
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

// pluginsInfo shows the plugin named c.Name: every one so named, when
// more than one is (they are then all failed: plugins.ErrNameClash).
func pluginsInfo(ctx context.Context, a *cli.App, c *cli.PluginsInfoCmd) error {
	infos, err := loadInfos(ctx)
	if err != nil {
		return err
	}
	var found []plugins.Info
	for _, i := range infos {
		if i.Name == c.Name {
			found = append(found, i)
		}
	}
	switch {
	case len(found) == 0:
		return fmt.Errorf("no plugin named %q (see runbox plugins ls)", c.Name)
	case a.G.JSON && len(found) == 1:
		return a.PrintJSON(found[0])
	case a.G.JSON:
		return a.PrintJSON(found) // several: a list, each as alone
	}
	for n, i := range found {
		if n > 0 {
			fmt.Println()
		}
		if err := printInfo(os.Stdout, i); err != nil {
			return err
		}
	}
	return nil
}

// printInfo writes what plugins info shows of i: the last error whole
// (Info.Detail: the guest's message, the wasm stack), as ls shows only
// its first line.
func printInfo(out io.Writer, i plugins.Info) error {
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
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
	if i.LastError != "" && i.Detail == "" && i.Status != plugins.StatusFailed && i.Status != plugins.StatusRefused { // else why says it
		fmt.Fprintf(w, "last error:\t%s\n", i.LastError)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if i.Detail != "" {
		// Many lines: after the table, each indented, none cut.
		fmt.Fprintln(out, "last error:")
		for _, l := range strings.Split(strings.TrimRight(i.Detail, "\n"), "\n") {
			fmt.Fprintf(out, "  %s\n", l)
		}
	}
	return nil
}

// pluginsInstall installs a bundle from a file or directory, or by name
// from the configured indexes, under the user's trust policy.
func pluginsInstall(ctx context.Context, a *cli.App, c *cli.PluginsInstallCmd) error {
	pol, err := installPolicy(c.Trusted, c.AllowUnsigned)
	if err != nil {
		return err
	}
	var m bundle.Manifest
	var sig bundle.Signature
	if _, serr := os.Stat(c.Bundle); serr == nil {
		m, sig, err = bundle.InstallChecked(c.Bundle, paths.PluginDir(), pol)
	} else {
		m, sig, err = installFromIndex(ctx, c.Bundle, pol)
	}
	if err != nil {
		return err
	}
	if a.G.JSON {
		return a.PrintJSON(installed{m, sig.String()})
	}
	fmt.Printf("installed %s %s (%d plugin file(s), %s) into %s\n", m.Name, m.Version, len(m.Plugins), sig, paths.PluginDir())
	return nil
}

// installed is install's and upgrade's --json answer.
type installed struct {
	bundle.Manifest
	Verdict string `json:"verdict"`
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
		k, err := bundle.ReadPrivateKey(c.Key)
		if err != nil {
			return fmt.Errorf("--key: %w", err)
		}
		key = k
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
		fmt.Printf("signed by %s\n", bundle.Fingerprint(key.Public().(ed25519.PublicKey)))
	}
	return nil
}

// pluginsVerify checks a bundle and says exactly one of: signed by a
// trusted key NAME, signed by an untrusted key, bad signature, unsigned.
// A bad signature or a broken bundle fails (exit 1).
func pluginsVerify(ctx context.Context, a *cli.App, c *cli.PluginsVerifyCmd) error {
	pol, err := installPolicy(c.Trusted, false)
	if err != nil {
		return err
	}
	m, sig, err := bundle.Inspect(c.Bundle, pol.Trust, pol.Extra...)
	if err != nil {
		return err
	}
	if a.G.JSON {
		if err := a.PrintJSON(installed{m, sig.String()}); err != nil {
			return err
		}
	} else {
		fmt.Printf("%s %s: %d plugin file(s), checksums ok, %s\n", m.Name, m.Version, len(m.Plugins), sig)
	}
	if sig.State == bundle.BadSignature {
		return cli.ExitCode(1)
	}
	return nil
}

// pluginsTest runs the fixtures; it fails when any fixture does not match.
func pluginsTest(ctx context.Context, a *cli.App, c *cli.PluginsTestCmd) error {
	run := func() (authoring.Report, error) { return authoring.RunFixtures(ctx, c.Plugin, c.Fixtures) }
	if strings.HasSuffix(c.Plugin, bundle.RulesSuffix) {
		run = func() (authoring.Report, error) { return authoring.RunRulesFixtures(c.Plugin, c.Fixtures) }
	}
	rep, err := run()
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
	if c.Rules {
		if err := authoring.ScaffoldRules(dir, c.Name); err != nil {
			return err
		}
		if a.G.JSON {
			return a.PrintJSON(map[string]string{"dir": dir, "kind": "rules", "name": c.Name})
		}
		fmt.Printf("created rules %q in %s\n\nnext:\n  cd %s\n  runbox plugins test %s%s testdata\n  runbox plugins pack . %s.tar.gz --key KEY\n  runbox plugins install %s.tar.gz\n", c.Name, dir, dir, c.Name, bundle.RulesSuffix, c.Name, c.Name)
		return nil
	}
	if c.Kind == "" {
		return fmt.Errorf("plugins new: --kind is required (classifier, progress or planner), or --rules")
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
	fmt.Printf("created %s plugin %q in %s\n\nnext:\n  cd %s\n  make            # builds %s.wasm\n  make test       # runs its fixtures (runbox plugins test)\n  make bundle KEY=%s   # %s-VERSION.tar.gz, signed (runbox plugins keygen makes the key)\n  runbox plugins install %s-0.1.0.tar.gz   # the next run and analyze use it\n\nthe version is in runbox-bundle.json, and only there\n",
		c.Kind, c.Name, dir, dir, c.Name, defaultKeyPath(), c.Name, c.Name)
	return nil
}
