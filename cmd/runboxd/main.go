// Command runboxd is the half of runbox that holds the store, the
// sandboxes and the plugin runtime: the daemon, `analyze` and `plugins`
// (and `mcp`, which keeps the MCP SDK out of the thin client).
// People and agents run `runbox`, a thin client that starts quickly;
// runbox hands these commands to the runboxd installed next to it. The
// command line is the same in both (cmd/internal/cli).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == cli.SuperviseArg {
		os.Exit(supervisor.Main(os.Args[2:]))
	}
	os.Exit(cli.Main(os.Args[1:], engine{}))
}

// engine runs the engine commands in this process.
type engine struct{}

func (engine) Run(ctx context.Context, a *cli.App, cmd any) error {
	switch c := cmd.(type) {
	case *cli.DaemonCmd:
		return runDaemon(ctx, a, c)
	case *cli.DoctorCmd:
		return runDoctor(ctx, a, c)
	case *cli.AnalyzeCmd:
		return runAnalyze(ctx, a, c)
	case *cli.McpCmd:
		return runMCP(ctx, a, c)
	case *cli.PlotCmd:
		return runPlot(ctx, a, c)
	case *cli.UiCmd:
		return runUI(ctx, a, c)
	case *cli.PluginsLsCmd:
		return pluginsLs(ctx, a, c)
	case *cli.PluginsInfoCmd:
		return pluginsInfo(ctx, a, c)
	case *cli.PluginsTestCmd:
		return pluginsTest(ctx, a, c)
	case *cli.PluginsNewCmd:
		return pluginsNew(ctx, a, c)
	case *cli.PluginsInstallCmd:
		return pluginsInstall(ctx, a, c)
	case *cli.PluginsRemoveCmd:
		return pluginsRemove(ctx, a, c)
	case *cli.PluginsPackCmd:
		return pluginsPack(ctx, a, c)
	case *cli.PluginsVerifyCmd:
		return pluginsVerify(ctx, a, c)
	}
	if ok, err := shareCmd(ctx, a, cmd); ok {
		return err
	}
	return fmt.Errorf("runboxd: %T is not an engine command", cmd)
}
