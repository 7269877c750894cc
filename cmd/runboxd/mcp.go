package main

import (
	"context"
	"os"

	"github.com/runbox/runbox/clients/mcp"
	"github.com/runbox/runbox/cmd/internal/cli"
)

// runMCP serves the MCP tools, a client of the daemon like every command.
func runMCP(ctx context.Context, a *cli.App, c *cli.McpCmd) error {
	return mcp.Serve(ctx, a.Client(), mcp.ServeOptions{
		Options: mcp.Options{Version: cli.Version},
		HTTP:    c.HTTP, TokenFile: c.TokenFile, AllowRemote: c.AllowRemote,
	}, os.Stderr)
}
