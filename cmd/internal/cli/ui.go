package cli

import "context"

// UiCmd is `runbox ui`. It runs in runboxd (which embeds the web assets),
// a client of the daemon like every command.
type UiCmd struct {
	Addr        string `help:"Listen on HOST:PORT (loopback only unless --allow-remote; port 0 picks a free one)." default:"127.0.0.1:0" placeholder:"HOST:PORT"`
	AllowRemote bool   `help:"Allow a non-loopback listen address (anyone who has the printed URL can stop and retry runs)."`
}

// Run hands the command to runboxd.
func (c *UiCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }
