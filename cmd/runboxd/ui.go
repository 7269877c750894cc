package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/runbox/runbox/clients/ui"
	"github.com/runbox/runbox/cmd/internal/cli"
)

// runUI serves the dashboard until interrupted.
func runUI(ctx context.Context, a *cli.App, c *cli.UiCmd) error {
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	return ui.Serve(ctx, a.Client(), ui.Options{Addr: c.Addr, AllowRemote: c.AllowRemote}, os.Stderr)
}
