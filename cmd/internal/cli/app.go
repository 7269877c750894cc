package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/internal/printable"
)

// App is what every command gets: the globals, the engine and a lazily
// made client.
type App struct {
	G      *Globals
	Engine Engine
	c      *client.Client
}

func newApp(g *Globals, e Engine) *App {
	if g.Home != "" {
		if abs, err := filepath.Abs(g.Home); err == nil {
			g.Home = abs
		}
		// The daemon and its children read RUNBOX_HOME.
		os.Setenv("RUNBOX_HOME", g.Home)
	} else {
		g.Home = paths.Home()
	}
	return &App{G: g, Engine: e}
}

// client connects to the daemon, starting it when none answers.
func (a *App) client() *client.Client {
	if a.c == nil {
		exe, err := os.Executable()
		if err != nil {
			exe = os.Args[0]
		}
		a.c = client.New(client.Options{
			Home:   a.G.Home,
			Socket: paths.SocketPath(a.G.Home),
			Exe:    exe,
			Args:   []string{"daemon", "--idle-timeout", "5m"},
		})
	}
	return a.c
}

// PrintJSON prints v as indented JSON.
func (a *App) PrintJSON(v any) error {
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
	return err
}

// Sibling returns the executable named name in the directory of this
// process's binary (symlinks resolved), and this binary's path.
func Sibling(name string) (sib, self string, err error) {
	self, err = os.Executable()
	if err != nil {
		return "", "", fmt.Errorf("find own binary: %w", err)
	}
	if real, err := filepath.EvalSymlinks(self); err == nil {
		self = real
	}
	sib = filepath.Join(filepath.Dir(self), name)
	if st, err := os.Stat(sib); err != nil || !st.Mode().IsRegular() || st.Mode()&0o111 == 0 {
		return "", self, fmt.Errorf("no executable %s next to %s", name, self)
	}
	return sib, self, nil
}

func errorf(format string, a ...any) error { return fmt.Errorf(format, a...) }

// shown is standard output for runbox's views of runs (status, ls, plan,
// sweep, diff, analyze): what a run supplied is shown there, not obeyed
// (package printable). `runbox logs`, an attached run's output and JSON
// go out as they are.
func shown() io.Writer { return printable.Writer(os.Stdout) }
