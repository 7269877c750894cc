package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/runbox/runbox/host"
	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/sandbox"
)

// Options configure a daemon.
type Options struct {
	Home   string
	Socket string
	// IdleTimeout ends the daemon after this long with no active runs and
	// no requests (0 = never).
	IdleTimeout time.Duration
	MaxParallel int
	Version     string
	Logger      *slog.Logger
	// Sandboxes and Judge are built by the caller (cmd/runbox wires the
	// real backends and plugins).
	Sandboxes    map[string]sandbox.Sandbox
	Missing      map[string]string // why a backend is not in Sandboxes (host.Config)
	Judge        host.Judge
	DefaultImage string
	// GPUs are this host's GPUs (gpu.Detect), the same set the caller
	// gave the backends that hand them out: their admission checks a
	// request against it, the engine's queue reserves from it.
	GPUs gpu.Inventory
}

// ErrRunning means another daemon already owns this home.
var ErrRunning = errors.New("a runbox daemon is already running")

// Run serves until ctx ends or the daemon has been idle for IdleTimeout.
func Run(ctx context.Context, o Options) error {
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	if err := os.MkdirAll(o.Home, 0o700); err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	unlock, err := LockHome(o.Home)
	if err != nil {
		return err
	}
	defer unlock()
	st, damage, err := openStore(ctx, o, log)
	if err != nil {
		return err
	}
	defer st.Close()
	eng, err := host.New(host.Config{
		Home: o.Home, Store: st, Sandboxes: o.Sandboxes, Missing: o.Missing, Judge: o.Judge,
		MaxParallel: o.MaxParallel, DefaultImage: o.DefaultImage, Logger: log,
		GPUs: o.GPUs,
	})
	if err != nil {
		return err
	}
	if err := eng.Recover(ctx); err != nil {
		log.Error("daemon: recover", "err", err)
	}
	go eng.RecoverSweeps(ctx) // members a killed daemon did not create yet
	ln, err := listen(o.Socket)
	if err != nil {
		eng.Close()
		return err
	}
	ln = refuseConfinedPeers(ln, log) // peers_linux.go
	// Where this daemon listens depends on its environment; clients
	// launched with another find it through the home (paths.SocketPointer).
	if err := paths.WriteSocketPointer(o.Home, o.Socket); err != nil {
		log.Warn("daemon: socket pointer", "err", err)
	}
	defer paths.RemoveSocketPointer(o.Home, o.Socket)
	srv := &server{eng: eng, log: log, version: o.Version, home: o.Home, started: time.Now(), damage: damage}
	srv.lastSeen.Store(time.Now().UnixNano())
	hs := &http.Server{Handler: srv.routes(), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	log.Info("daemon: listening", "socket", o.Socket, "pid", os.Getpid())

	idle := idleTicker(o.IdleTimeout)
	defer idle.Stop()
	var serveErr error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case serveErr = <-errc:
			break loop
		case <-idle.C:
			active, queued := eng.Counts()
			quiet := time.Since(time.Unix(0, srv.lastSeen.Load()))
			if active == 0 && queued == 0 && srv.inflight.Load() == 0 && quiet >= o.IdleTimeout {
				log.Info("daemon: idle, exiting", "idle", quiet.Round(time.Second))
				break loop
			}
		}
	}
	// Stop accepting first so no client sees a half-closed engine.
	_ = ln.Close()
	shutCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	_ = hs.Shutdown(shutCtx)
	cancel()
	eng.Close()
	if serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		return fmt.Errorf("daemon: serve: %w", serveErr)
	}
	return nil
}

func idleTicker(d time.Duration) *time.Ticker {
	if d <= 0 {
		d = 24 * time.Hour * 365
	}
	return time.NewTicker(min(d/4+time.Millisecond, 30*time.Second))
}

// LockHome takes an exclusive flock on home/daemon.lock for the daemon's
// life, so two daemons never race for one store (and runbox doctor never
// repairs a store a daemon is using). ErrRunning when one holds it.
func LockHome(home string) (func(), error) {
	p := filepath.Join(home, "daemon.lock")
	f, err := os.OpenFile(p, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("daemon: lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w for %s", ErrRunning, home)
		}
		return nil, fmt.Errorf("daemon: lock %s: %w", p, err)
	}
	_ = f.Truncate(0)
	_, _ = fmt.Fprintf(f, "%d\n", os.Getpid())
	return func() { f.Close() }, nil
}

// listen opens the unix socket with mode 0600, replacing a stale one (we
// hold the home lock, so no live daemon owns it).
func listen(path string) (net.Listener, error) {
	if len(path) >= 104 {
		return nil, fmt.Errorf("daemon: socket path %q is too long for a unix socket (set RUNBOX_SOCKET to a shorter path)", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("daemon: %w", err)
	}
	_ = os.Remove(path)
	old := syscall.Umask(0o177)
	ln, err := net.Listen("unix", path)
	syscall.Umask(old)
	if err != nil {
		return nil, fmt.Errorf("daemon: listen on %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("daemon: chmod socket: %w", err)
	}
	return ln, nil
}
