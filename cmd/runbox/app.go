package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/host/client"
)

// app is what every command gets: the globals and a lazily made client.
type app struct {
	g *Globals
	c *client.Client
}

func newApp(g *Globals) *app {
	if g.Home != "" {
		if abs, err := filepath.Abs(g.Home); err == nil {
			g.Home = abs
		}
		// The daemon and its children read RUNBOX_HOME.
		os.Setenv("RUNBOX_HOME", g.Home)
	} else {
		g.Home = host.Home()
	}
	return &app{g: g}
}

// client connects to the daemon, starting it when none answers.
func (a *app) client() *client.Client {
	if a.c == nil {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		a.c = client.New(client.Options{
			Home:   a.g.Home,
			Socket: host.SocketPath(a.g.Home),
			Exe:    exe,
			Args:   []string{"daemon", "--idle-timeout", "5m"},
		})
	}
	return a.c
}

func (a *app) printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// friendly rewrites daemon errors into one clear line.
func friendly(err error) error {
	var ce *client.Error
	if errors.As(err, &ce) {
		return errors.New(ce.Msg)
	}
	if errors.Is(err, client.ErrNoDaemon) {
		return err
	}
	return err
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }
