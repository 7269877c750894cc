//go:build !wasip1

package sdk

import "sync"

var (
	hostMu     sync.Mutex
	hostPlugin *Plugin
)

// Register records p. Built for wasip1 it makes p the module's exports; on
// other platforms it only records p, so plugin packages compile, vet and can
// be unit-tested natively (see Registered).
func Register(p Plugin) {
	hostMu.Lock()
	defer hostMu.Unlock()
	if hostPlugin != nil {
		panic("sdk: Register called twice")
	}
	hostPlugin = &p
}

// Registered returns the plugin passed to Register, or nil. It exists on
// non-wasip1 builds only, for native tests of plugin packages.
func Registered() *Plugin {
	hostMu.Lock()
	defer hostMu.Unlock()
	return hostPlugin
}
