package paths

import "testing"

func TestPluginDir(t *testing.T) {
	tests := []struct {
		name                     string
		plugins, home, xdg, want string
	}{
		{"explicit", "/p", "/h", "/x", "/p"},
		{"follows the home", "", "/h", "/x", "/h/plugins"},
		{"xdg config", "", "", "/x", "/x/runbox/plugins"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("RUNBOX_PLUGINS", tt.plugins)
			t.Setenv("RUNBOX_HOME", tt.home)
			t.Setenv("XDG_CONFIG_HOME", tt.xdg)
			if got := PluginDir(); got != tt.want {
				t.Errorf("PluginDir() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestHomeAndSocket(t *testing.T) {
	t.Setenv("RUNBOX_HOME", "/h")
	t.Setenv("RUNBOX_SOCKET", "")
	t.Setenv("XDG_RUNTIME_DIR", "/run/user/1")
	if got := Home(); got != "/h" {
		t.Errorf("Home() = %q", got)
	}
	if got := SocketPath(Home()); got != "/h/runbox.sock" {
		t.Errorf("SocketPath = %q: a set home keeps its socket", got)
	}
	t.Setenv("RUNBOX_HOME", "")
	if got := SocketPath("/anything"); got != "/run/user/1/runbox.sock" {
		t.Errorf("SocketPath = %q, want the runtime dir", got)
	}
}
