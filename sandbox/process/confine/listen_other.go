//go:build !linux

package confine

import (
	"errors"
	"net"
)

// ListenInRunNet is Linux's.
func ListenInRunNet() (net.Listener, error) {
	return nil, errors.New("--allow-net needs network namespaces, which are Linux-only (" + goos + ")")
}
