// Package paths says where runbox keeps its state, socket, plugins and
// compilation cache, from the environment.
package paths

import (
	"os"
	"path/filepath"
	"strconv"
)

// Home is runbox's state directory: $RUNBOX_HOME, else
// $XDG_STATE_HOME/runbox, else ~/.local/state/runbox.
func Home() string {
	if h := os.Getenv("RUNBOX_HOME"); h != "" {
		return h
	}
	if x := os.Getenv("XDG_STATE_HOME"); x != "" {
		return filepath.Join(x, "runbox")
	}
	if d, err := os.UserHomeDir(); err == nil {
		return filepath.Join(d, ".local", "state", "runbox")
	}
	return filepath.Join(os.TempDir(), "runbox-"+strconv.Itoa(os.Getuid()))
}

// SocketPath is where the daemon listens: $RUNBOX_SOCKET, else
// home/runbox.sock when RUNBOX_HOME is set, else $XDG_RUNTIME_DIR/runbox.sock,
// else home/runbox.sock.
func SocketPath(home string) string {
	if s := os.Getenv("RUNBOX_SOCKET"); s != "" {
		return s
	}
	if os.Getenv("RUNBOX_HOME") == "" {
		if x := os.Getenv("XDG_RUNTIME_DIR"); x != "" {
			return filepath.Join(x, "runbox.sock")
		}
	}
	return filepath.Join(home, "runbox.sock")
}

// PluginDir is where users install plugins: $RUNBOX_PLUGINS, else
// $RUNBOX_HOME/plugins when RUNBOX_HOME is set (a home is self-contained:
// a test or a second installation must not see the user's plugins), else
// $XDG_CONFIG_HOME/runbox/plugins, else ~/.config/runbox/plugins.
func PluginDir() string {
	if p := os.Getenv("RUNBOX_PLUGINS"); p != "" {
		return p
	}
	if h := os.Getenv("RUNBOX_HOME"); h != "" {
		return filepath.Join(h, "plugins")
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "runbox", "plugins")
	}
	if d, err := os.UserHomeDir(); err == nil {
		return filepath.Join(d, ".config", "runbox", "plugins")
	}
	return filepath.Join(Home(), "plugins")
}

// CacheDir holds the plugin compilation cache: $XDG_CACHE_HOME/runbox or
// ~/.cache/runbox (RUNBOX_HOME set: home/cache).
func CacheDir() string {
	if h := os.Getenv("RUNBOX_HOME"); h != "" {
		return filepath.Join(h, "cache")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "runbox")
	}
	return filepath.Join(Home(), "cache")
}
