//go:build !linux

package daemon

import (
	"log/slog"
	"net"
)

// refuseConfinedPeers: runs are confined only on Linux.
func refuseConfinedPeers(ln net.Listener, _ *slog.Logger) net.Listener { return ln }
