// Command detecteval measures runbox's failure codes and progress states on
// the real-output corpus (`make eval`): every case through the path
// `runbox analyze --json` takes, with the built-in plugins only, and prints
// accuracy per failure code, per framework and per split (train and the
// held-out fifth), then the cases it got wrong.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/plugins"
	"github.com/runbox/runbox/plugins/analyze/corpus"
	"github.com/runbox/runbox/plugins/builtin"
	"github.com/runbox/runbox/sdk"
)

func main() {
	dir := flag.String("dir", "plugins/builtin/testdata/corpus", "corpus directory")
	misses := flag.Bool("misses", true, "list the cases it got wrong")
	flag.Parse()
	if err := run(context.Background(), os.Stdout, *dir, *misses); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, w io.Writer, dir string, misses bool) error {
	c, err := corpus.Load(dir)
	if err != nil {
		return err
	}
	h, err := plugins.NewHost(ctx, plugins.Config{
		Builtins: builtin.Plugins(),
		CacheDir: filepath.Join(paths.CacheDir(), "wazero"),
		Logger:   slog.New(slog.DiscardHandler),
	})
	if err != nil {
		return err
	}
	defer h.Close(ctx)
	fallback := func(in sdk.ClassifyInput) *sdk.Failure { return host.Classify(ctx, nil, in) }
	rep, err := c.Run(ctx, h, fallback)
	if err != nil {
		return err
	}
	ft, pt := corpus.Total(rep.Failures), corpus.Total(rep.Progress)
	fmt.Fprintf(w, "failure codes right: train %s, held-out %s, all %s\n", pct(ft["train"]), pct(ft["heldout"]), pct(ft["all"]))
	fmt.Fprintf(w, "progress states right: train %s, held-out %s, all %s\n\n", pct(pt["train"]), pct(pt["heldout"]), pct(pt["all"]))
	fmt.Fprintln(w, corpus.Markdown("failure code", corpus.By(rep.Failures, func(r corpus.Result) string { return r.Want })))
	fmt.Fprintln(w, corpus.Markdown("framework (failures)", corpus.By(rep.Failures, func(r corpus.Result) string { return r.Framework })))
	fmt.Fprintln(w, corpus.Markdown("framework (progress)", corpus.By(rep.Progress, func(r corpus.Result) string { return r.Framework })))
	if misses {
		fmt.Fprintln(w, "misses:")
		for _, r := range append(rep.Failures, rep.Progress...) {
			if !r.OK {
				fmt.Fprintf(w, "  %s [%s, %s] want %s: %s\n", r.ID, r.Framework, r.Split, r.Want, r.Why)
			}
		}
	}
	return nil
}

func pct(t *corpus.Tally) string {
	if t == nil || t.All == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d (%.1f%%)", t.Right, t.All, 100*t.Rate())
}
