package process

import (
	"os"
	"strings"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/confine"
)

// superKind is what a supervisor is started as; a standby serves runs of
// its own kind only.
type superKind int

const (
	// plain: in the caller's namespaces, as every run's supervisor is
	// unless it confines one that needs more.
	plain superKind = iota
	// ownUserNS: in a user namespace of its own (confine.SupervisorUserNS),
	// for a non-root caller's runs that cut the network or hide sockets:
	// it can then make those namespaces on a thread, as root does, where a
	// plain supervisor would exec the confine entry for every run. Runs
	// that are not confined never go there: in a user namespace, files of
	// unmapped owners show as nobody's and set-user-ID programs (sudo)
	// stop working.
	ownUserNS
	nKinds
)

// kindFor is the kind of supervisor spec's run needs.
func kindFor(spec *sandbox.Spec) superKind {
	l, err := confine.ParseLevel(spec.Isolate)
	if err != nil {
		return plain // the supervisor refuses it
	}
	rt := os.Getenv("XDG_RUNTIME_DIR")
	for _, kv := range spec.Env {
		if v, ok := strings.CutPrefix(kv, "XDG_RUNTIME_DIR="); ok {
			rt = v
		}
	}
	if confine.OwnUserNS(l, rt) {
		return ownUserNS
	}
	return plain
}
