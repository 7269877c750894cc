package main

import (
	"context"
	"fmt"
	"os"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/clients/plot"
	"github.com/runbox/runbox/cmd/internal/cli"
)

// runPlot draws runs' metrics, a client of the daemon like every command.
func runPlot(ctx context.Context, a *cli.App, c *cli.PlotCmd) error {
	var runs []*api.Metrics
	for _, id := range c.Runs {
		m, err := a.Client().Metrics(ctx, id)
		if err != nil {
			return fmt.Errorf("run %s: %w", id, err)
		}
		runs = append(runs, m)
	}
	names, err := plot.Choose(runs, c.Metric)
	if err != nil {
		return err
	}
	if c.Output == "" {
		return plot.Text(os.Stdout, runs, names, c.Width, c.Height)
	}
	if err := plot.Save(c.Output, runs, names); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "wrote %s (%d metric(s) of %d run(s))\n", c.Output, len(names), len(runs))
	return nil
}
