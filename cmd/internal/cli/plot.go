package cli

import (
	"context"
	"path/filepath"
	"strings"
)

// PlotCmd is `runbox plot`. It runs in runboxd, which links the plotting
// library; the thin client stays small.
type PlotCmd struct {
	Runs   []string `arg:"" name:"run" help:"Runs to draw, overlaid: their numbers from 'runbox ls' (e.g. 41 42), @last and @last~1 (the newest two), or full ids or unique prefixes." placeholder:"RUN"`
	Metric []string `help:"Metric to draw (repeatable; default: every metric the runs report)." placeholder:"NAME"`
	Output string   `short:"o" help:"Write the chart to FILE.svg or FILE.png instead of drawing it in the terminal." type:"path" placeholder:"FILE"`
	Width  int      `help:"Terminal chart width in cells." default:"72"`
	Height int      `help:"Terminal chart height in cells." default:"14"`
}

// Run checks the flags and hands the command to runboxd.
func (c *PlotCmd) Run(ctx context.Context, a *App) error {
	if c.Output != "" {
		switch strings.ToLower(filepath.Ext(c.Output)) {
		case ".svg", ".png":
		default:
			return usageError{errorf("-o %s: the file must end in .svg or .png", c.Output)}
		}
	}
	return a.Engine.Run(ctx, a, c)
}
