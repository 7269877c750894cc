package confine

import (
	"errors"
	"fmt"
	"net"
	"runtime"

	"golang.org/x/sys/unix"
)

// ListenInRunNet listens on 127.0.0.1 (any free port) inside the network
// namespace that runs of this process with a network cut get (the one
// StartInThread enters), and returns the listener to serve from this
// process's own namespace: a socket belongs to the namespace it was made
// in, whatever thread later accepts on it. A run then reaches this
// listener, and nothing else, off its loopback (--allow-net's proxy).
// It needs what InThread needs: root, or a supervisor in its own user
// namespace; elsewhere it is an error, never a weaker run.
func ListenInRunNet() (net.Listener, error) {
	if !nsCapable() {
		return nil, errors.New("a listener inside the run's network namespace needs the supervisor to hold CAP_SYS_ADMIN over it (root, or a user namespace of its own)")
	}
	fd, err := emptyNetNS()
	if err != nil {
		return nil, err
	}
	type res struct {
		l   net.Listener
		err error
	}
	ch := make(chan res, 1)
	go func() {
		// The thread changes namespace and is never handed back: it exits
		// with this goroutine, as a thread in another namespace must.
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_FS); err != nil { // setns needs an fs struct of its own
			ch <- res{nil, fmt.Errorf("unshare fs: %w", err)}
			return
		}
		if err := unix.Setns(fd, unix.CLONE_NEWNET); err != nil {
			ch <- res{nil, fmt.Errorf("enter the run's network namespace: %w", err)}
			return
		}
		l, err := net.Listen("tcp4", "127.0.0.1:0")
		ch <- res{l, err}
	}()
	r := <-ch
	return r.l, r.err
}
