package cli

import (
	"context"

	"github.com/runbox/runbox/api/client"
)

// McpCmd is `runbox mcp`. It runs in runboxd: linked into runbox, the MCP
// SDK made the thin client 8.5 -> 11.7 MB and added ~1.4 ms of package init
// to every command, for a server that starts once per agent session.
type McpCmd struct {
	HTTP        string `name:"http" help:"Serve MCP over streamable HTTP on HOST:PORT (loopback only unless --allow-remote) instead of stdio; clients send the bearer token printed at start." placeholder:"HOST:PORT"`
	TokenFile   string `help:"With --http, read the bearer token from FILE, or write a new one there if it does not exist." type:"path" placeholder:"FILE"`
	AllowRemote bool   `help:"With --http, allow a non-loopback listen address."`
}

// Run serves the compute-local tools to an agent, in runboxd.
func (c *McpCmd) Run(ctx context.Context, a *App) error {
	if c.HTTP == "" && (c.TokenFile != "" || c.AllowRemote) {
		return usageError{errorf("--token-file and --allow-remote go with --http")}
	}
	return a.Engine.Run(ctx, a, c)
}

// Client is the command's connection to the daemon, started on demand.
func (a *App) Client() *client.Client { return a.client() }
