package paths

import (
	"os"
	"path/filepath"
	"strings"
)

// SocketPointer is the file in runbox's home where the daemon writes the
// path of the socket it listens on. Where it listens depends on its
// environment (XDG_RUNTIME_DIR, RUNBOX_SOCKET); a client launched with
// another (a desktop app, an MCP stdio transport that passes only HOME,
// PATH and a few more, cron, systemd) finds it from the home alone.
func SocketPointer(home string) string { return filepath.Join(home, "daemon.socket") }

// WriteSocketPointer records socket as where the daemon of home listens,
// atomically.
func WriteSocketPointer(home, socket string) error {
	p := SocketPointer(home)
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, []byte(socket+"\n"), 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// PointedSocket is the socket the home's pointer names, "" when there is
// none or it names no socket (a daemon that went away).
func PointedSocket(home string) string {
	b, err := os.ReadFile(SocketPointer(home))
	if err != nil {
		return ""
	}
	s := strings.TrimSpace(string(b))
	if !filepath.IsAbs(s) {
		return ""
	}
	if st, err := os.Stat(s); err != nil || st.Mode()&os.ModeSocket == 0 {
		return ""
	}
	return s
}

// RemoveSocketPointer removes the pointer if it still names socket (a
// daemon that replaced it owns it now).
func RemoveSocketPointer(home, socket string) {
	if b, err := os.ReadFile(SocketPointer(home)); err == nil && strings.TrimSpace(string(b)) == socket {
		_ = os.Remove(SocketPointer(home))
	}
}
