package daemon

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/runbox/runbox/api"
)

// refuseConfinedPeers keeps confined runs, containers and any process the
// daemon cannot identify from using it: through the daemon a run could
// ask for a run without confinement (see "The daemon's socket: who may
// speak" in docs/RATIONALE.md). Two checks, both against the pinned
// process (pidfd) wherever the kernel offers one:
//
//   - at accept, the process that connected (SO_PEERPIDFD/SO_PEERCRED);
//   - on every read, the process that wrote those bytes (SCM_CREDENTIALS
//     and SCM_PIDFD, which the kernel attaches to each write and never
//     merges across writers), because a connection outlives its connector:
//     a confined child may connect and exit, and its parent write.
//
// A refused peer gets a 403 with the reason and its connection is closed.
func refuseConfinedPeers(ln net.Listener, log *slog.Logger) net.Listener {
	l := &peerListener{Listener: ln, log: log}
	l.judge, l.setupErr = newJudge("/proc")
	if ul, ok := ln.(*net.UnixListener); ok && l.setupErr == nil {
		l.setupErr = passCredentials(ul)
	}
	if l.setupErr != nil {
		log.Error("daemon: cannot identify peers; every connection will be refused", "err", l.setupErr)
	}
	return l
}

// passCredentials asks the kernel to attach the writer's credentials, and
// its pidfd where it can (Linux 6.5), to every message on the listener's
// connections, those written before accept included (accepted sockets
// take the listener's flags when they connect).
func passCredentials(ul *net.UnixListener) error {
	return setPassCredentials(raw(ul))
}

func raw(c syscall.Conn) syscall.RawConn {
	r, err := c.SyscallConn()
	if err != nil {
		return nil
	}
	return r
}

func setPassCredentials(raw syscall.RawConn) error {
	if raw == nil {
		return errors.New("no socket")
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSCRED, 1)
		// Without it (older kernels) a writer's pid is pinned only once
		// it is looked up: see mayWrite.
		_ = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PASSPIDFD, 1)
	}); err != nil {
		return err
	}
	if serr != nil {
		return fmt.Errorf("SO_PASSCRED: %w", serr)
	}
	return nil
}

type peerListener struct {
	net.Listener
	log      *slog.Logger
	judge    *judge
	setupErr error
}

func (l *peerListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return c, err
		}
		pc, pid, err := l.admit(c)
		if err == nil {
			return pc, nil
		}
		l.refuse(c, pid, err)
	}
}

// admit judges the process that connected. One that is gone already is
// no reason to refuse, nor to trust: what is written on its connection is
// judged as it arrives.
func (l *peerListener) admit(c net.Conn) (pc *peerConn, pid int, err error) {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil, 0, doubt("the connection is not a unix socket's (%T)", c)
	}
	if l.setupErr != nil {
		return nil, 0, doubt("the daemon cannot identify peers: %v", l.setupErr)
	}
	p, err := connector(uc)
	if err != nil && !errors.Is(err, errConnectorGone) {
		return nil, 0, doubt("its credentials cannot be read: %v", err)
	}
	// For writes from now on whatever the listener had when it connected:
	// one that connected before passCredentials (as the daemon starts)
	// has no flags of its own.
	_ = setPassCredentials(raw(uc))
	pc = &peerConn{UnixConn: uc, l: l, trusted: peer{pidfd: -1}}
	if err != nil { // errConnectorGone
		return pc, 0, nil
	}
	switch err := l.judge.check(p); {
	case err == nil:
		pc.trusted, pc.early = p, true
	case errors.Is(err, errGone):
		p.close()
	default:
		p.close()
		return nil, p.pid, err
	}
	return pc, p.pid, nil
}

// connector is the process that connected: SO_PEERPIDFD pins the very
// process (Linux 6.5); before it, SO_PEERCRED's pid is pinned by
// pidfd_open afterwards, which a peer that exits at once and whose pid is
// reused in between could get wrong (the fallback's known gap).
func connector(uc *net.UnixConn) (peer, error) {
	raw, err := uc.SyscallConn()
	if err != nil {
		return peer{}, err
	}
	p := peer{pidfd: -1}
	var cerr, ferr error
	if err := raw.Control(func(fd uintptr) {
		var cred *unix.Ucred
		if cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED); cerr == nil {
			p.pid = int(cred.Pid)
		}
		p.pidfd, ferr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_PEERPIDFD)
	}); err != nil {
		return peer{}, err
	}
	if cerr != nil {
		return peer{}, fmt.Errorf("SO_PEERCRED: %w", cerr)
	}
	switch {
	case ferr == nil:
		unix.CloseOnExec(p.pidfd)
	case errors.Is(ferr, unix.ENOPROTOOPT):
		p.pidfd = pinPID(p.pid)
	default:
		// The kernel has SO_PEERPIDFD and no process for it (before 6.16
		// it gives none for a reaped peer).
		return peer{pidfd: -1}, errConnectorGone
	}
	return p, nil
}

var errConnectorGone = errors.New("the connector is gone")

// pinPID opens a pidfd for pid, or returns -1 (then only the pid is known).
func pinPID(pid int) int {
	if pid <= 0 {
		return -1
	}
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return -1
	}
	unix.CloseOnExec(fd)
	return fd
}

// refuse answers 403 with why, and closes c.
func (l *peerListener) refuse(c net.Conn, pid int, why error) {
	l.log.Warn("daemon: refused a peer", "pid", pid, "why", why.Error())
	body, _ := json.Marshal(api.Error{Error: why.Error(), Code: "forbidden"})
	_ = c.SetWriteDeadline(time.Now().Add(time.Second))
	fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
	// Closed at once with the peer's request unread, the peer's write of
	// it fails (EPIPE) and it never reads why it was refused. So the
	// answer is followed by the end of what we send, and what the peer
	// still sends is read and dropped, bounded in time and size, off the
	// accepting goroutine.
	if cw, ok := c.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite()
	}
	go func() {
		_ = c.SetReadDeadline(time.Now().Add(time.Second))
		_, _ = io.CopyN(io.Discard, c, 1<<20)
		c.Close()
	}()
}

// peerConn checks, on every read, the process that wrote what was read.
type peerConn struct {
	*net.UnixConn
	l *peerListener
	// trusted is the last process found to be allowed: the connector, or
	// the last writer checked. The same process writing again costs one
	// pidfd_send_signal.
	// mu guards trusted, closed and refused: Close may come from
	// another goroutine than Read (trusted's pidfd is closed there).
	mu      sync.Mutex
	trusted peer
	// early: trusted is the connector, judged at accept, and nothing
	// with credentials has been read yet. Bytes without credentials can
	// only have been written before accept on a connection made before
	// the listener passed them (the daemon starting); they are the
	// connector's, or a process's it shared its connection with.
	early   bool
	closed  bool
	oob     [64]byte // SCM_CREDENTIALS and SCM_PIDFD fit; SCM_RIGHTS does not
	refused error
}

func (c *peerConn) Read(b []byte) (int, error) {
	if refused := c.refusal(); refused != nil {
		return 0, refused
	}
	n, oobn, _, _, err := c.UnixConn.ReadMsgUnix(b, c.oob[:])
	w := peerOfWriter(c.oob[:oobn])
	if n <= 0 {
		w.close()
		return 0, err
	}
	if verr := c.mayWrite(w); errors.Is(verr, net.ErrClosed) {
		return 0, verr
	} else if verr != nil {
		c.l.refuse(c.UnixConn, w.pid, verr)
		// A read error net/http closes on without answering it itself.
		refused := &net.OpError{Op: "read", Net: "unix", Err: verr}
		c.mu.Lock()
		c.refused = refused
		c.mu.Unlock()
		return 0, refused
	}
	return n, err
}

// refusal is the error a refused connection's reads return, nil until
// it is refused.
func (c *peerConn) refusal() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.refused
}

// mayWrite judges w, the writer of bytes just read, and keeps it as the
// trusted process when allowed (taking over its pidfd).
func (c *peerConn) mayWrite(w peer) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		w.close()
		return net.ErrClosed
	}
	if w.pid <= 0 {
		w.close()
		if c.early && c.trusted.alive() {
			return nil
		}
		return doubt("what was written carries no credentials the daemon can see")
	}
	c.early = false
	if w.pid == c.trusted.pid && c.trusted.alive() {
		// The same number as a live process known since before the
		// write: the same process.
		w.close()
		return nil
	}
	if w.pidfd < 0 {
		w.pidfd = pinPID(w.pid)
	}
	err := c.l.judge.check(w)
	if errors.Is(err, errGone) {
		err = doubt("the process that wrote the request is gone")
	}
	if err != nil {
		w.close()
		return err
	}
	c.trusted.close()
	c.trusted = w
	return nil
}

// peerOfWriter reads the credentials the kernel attached to a message,
// closing any descriptor that came with it.
func peerOfWriter(oob []byte) peer {
	w := peer{pidfd: -1}
	msgs, err := unix.ParseSocketControlMessage(oob)
	if err != nil {
		return w
	}
	for i := range msgs {
		m := &msgs[i]
		if m.Header.Level != unix.SOL_SOCKET {
			continue
		}
		switch m.Header.Type {
		case unix.SCM_CREDENTIALS:
			if cred, err := unix.ParseUnixCredentials(m); err == nil {
				w.pid = int(cred.Pid)
			}
		case unix.SCM_PIDFD:
			if len(m.Data) >= 4 {
				if w.pidfd >= 0 {
					unix.Close(w.pidfd)
				}
				w.pidfd = int(int32(binary.NativeEndian.Uint32(m.Data)))
			}
		case unix.SCM_RIGHTS:
			fds, _ := unix.ParseUnixRights(m)
			for _, fd := range fds {
				unix.Close(fd)
			}
		}
	}
	return w
}

func (c *peerConn) Close() error {
	var err error
	if c.refusal() == nil {
		err = c.UnixConn.Close()
	} // else refuse closes it once the peer's rest is read
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.trusted.close()
	}
	c.mu.Unlock()
	return err
}
