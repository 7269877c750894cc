package egress

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"
)

// A container's proxy. A container with --allow-net has no network
// (--network none); its init (the supervisor) listens on 127.0.0.1 inside
// it and hands each connection over a unix socket in the run's box to a
// helper process outside (HelperMain), which runs the Proxy and dials from
// the host. The helper is detached from the daemon, like the container:
// a daemon that dies takes neither down. It ends when the run's exit
// record appears in the box, or the box goes away.

// Socket names in the box: the command's proxy and the setup's.
const (
	BridgeSocket      = "egress.sock"
	SetupBridgeSocket = "egress-setup.sock"
	// ListsFile (in the state dir) gives the helper its lists.
	ListsFile = "egress-lists.json"
	// HelperArg is the argv word of the helper: `EXE HelperArg STATEDIR BOX`.
	HelperArg = "__egress"
)

// Lists are the helper's allow-lists.
type Lists struct {
	Allow []string `json:"allow,omitempty"`
	Setup []string `json:"setup,omitempty"`
}

// Bridge accepts on l (inside the container) and carries each connection
// to the unix socket sock (the helper outside), until ctx ends.
func Bridge(ctx context.Context, l net.Listener, sock string) {
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	slots := make(chan struct{}, DefaultMaxConns)
	for {
		slots <- struct{}{}
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer func() { <-slots }()
			defer c.Close()
			up, err := net.DialTimeout("unix", sock, 5*time.Second)
			if err != nil {
				writeStatus(c, 502, "runbox egress proxy: the proxy outside the container is gone: "+err.Error())
				return
			}
			defer up.Close()
			pipe(c, c, up)
		}()
	}
}

// HelperMain is the helper: `HelperArg STATEDIR BOX`. It returns the exit
// code.
func HelperMain(args []string) int {
	if len(args) != 2 {
		fmt.Fprintf(os.Stderr, "usage: %s STATEDIR BOX\n", HelperArg)
		return 2
	}
	stateDir, box := args[0], args[1]
	var lists Lists
	b, err := os.ReadFile(filepath.Join(stateDir, ListsFile))
	if err == nil {
		err = json.Unmarshal(b, &lists)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "runbox egress helper:", err)
		return 1
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	var wg sync.WaitGroup
	serve := func(hosts []string, sock, report string) error {
		list, err := Parse(hosts)
		if err != nil {
			return err
		}
		path := filepath.Join(box, sock)
		_ = os.Remove(path)
		l, err := net.Listen("unix", path)
		if err != nil {
			return err
		}
		_ = os.Chmod(path, 0o666) // the container's user, whoever it is
		var mu sync.Mutex
		var last time.Time
		p := &Proxy{Allow: list, Hosts: ResolveFromEnv()}
		p.OnRefuse = func(Refusal) {
			mu.Lock()
			write := time.Since(last) > time.Second
			if write {
				last = time.Now()
			}
			mu.Unlock()
			if write {
				_ = WriteReport(stateDir, report, p.Report())
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Serve(ctx, l)
			_ = WriteReport(stateDir, report, p.Report())
		}()
		return nil
	}
	setup := lists.Setup
	if len(setup) == 0 {
		setup = lists.Allow
	}
	for _, s := range []struct {
		hosts        []string
		sock, report string
	}{{lists.Allow, BridgeSocket, ReportFile}, {setup, SetupBridgeSocket, SetupReportFile}} {
		if len(s.hosts) == 0 {
			continue
		}
		if err := serve(s.hosts, s.sock, s.report); err != nil {
			fmt.Fprintln(os.Stderr, "runbox egress helper:", err)
			cancel()
			wg.Wait()
			return 1
		}
	}
	// Until the run has ended (its exit record) or its box is gone.
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-t.C:
			if _, err := os.Stat(filepath.Join(box, "exit.json")); err == nil || errors.Is(statErr(box), os.ErrNotExist) {
				cancel()
			}
		}
	}
	wg.Wait()
	return 0
}

func statErr(p string) error {
	_, err := os.Stat(p)
	return err
}
