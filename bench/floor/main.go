//go:build linux

// Command floor is the least a durable run service written in Go can do
// for `run -- true` (issue 23's floor). A Go client dials a daemon on a
// unix socket and sends the command; the daemon writes the queued spec
// and fdatasyncs it, forks and execs the command with no supervisor, no
// cgroup, no store and no log, waits for it, writes the exit record and
// fdatasyncs it, and replies once with the exit status, which the client
// exits with (one reply, not an acknowledgement and then a report: the
// least the durability rule allows). It is what runbox's hot path would
// cost if every step but the two syncs the issue keeps, the Go client's
// start and the command itself cost nothing; bench/hotpath_floor.sh runs
// it beside `tsp -f true` and runbox.
//
//	floor serve [-nosync|-noexec] SOCKET DIR   the daemon (until killed)
//	floor run SOCKET -- CMD ARGS...            the client
package main

import (
	"bufio"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	switch os.Args[1] {
	case "serve":
		fs := flag.NewFlagSet("serve", flag.ExitOnError)
		nosync := fs.Bool("nosync", false, "skip both fdatasyncs (what they cost)")
		noexec := fs.Bool("noexec", false, "skip the syncs and the command: the client and its connection alone")
		_ = fs.Parse(os.Args[2:])
		if fs.NArg() != 2 {
			usage()
		}
		err := serve(fs.Arg(0), fs.Arg(1), mode{durable: !*nosync && !*noexec, exec: !*noexec})
		fmt.Fprintln(os.Stderr, "floor:", err)
		os.Exit(1)
	case "run":
		// As runbox's client: one P (cmd/runbox).
		runtime.GOMAXPROCS(1)
		args := os.Args[2:]
		if len(args) < 3 || args[1] != "--" {
			usage()
		}
		code, err := run(args[0], args[2:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "floor:", err)
			os.Exit(1)
		}
		os.Exit(code)
	default:
		usage()
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: floor serve [-nosync|-noexec] SOCKET DIR | floor run SOCKET -- CMD ARGS...")
	os.Exit(2)
}

// run sends the command (NUL-separated, newline-ended), waits for the
// acknowledgement byte, then for the exit status (4 bytes).
// The socket is a blocking one, used with plain system calls: the
// runtime's network poller (net.Dial) costs a Go client ~0.2 ms more.
func run(sock string, argv []string) (int, error) {
	fd, err := syscall.Socket(syscall.AF_UNIX, syscall.SOCK_STREAM, 0) // the client execs nothing: no CLOEXEC needed
	if err != nil {
		return 0, err
	}
	c := os.NewFile(uintptr(fd), sock) // blocking: not handed to the poller
	defer c.Close()
	if err := syscall.Connect(fd, &syscall.SockaddrUnix{Name: sock}); err != nil {
		return 0, fmt.Errorf("dial %s: %w", sock, err)
	}
	if _, err := io.WriteString(c, strings.Join(argv, "\x00")+"\n"); err != nil {
		return 0, err
	}
	var reply [5]byte
	if _, err := io.ReadFull(c, reply[:]); err != nil {
		return 0, fmt.Errorf("daemon: %w", err)
	}
	if reply[0] != 'A' {
		return 0, errors.New("daemon refused the run")
	}
	return int(binary.BigEndian.Uint32(reply[1:])), nil
}

// mode is what a daemon does of a run's work (all of it unless measuring).
type mode struct{ durable, exec bool }

// serve answers runs until its listener fails, and returns why.
func serve(sock, dir string, m mode) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_ = os.Remove(sock)
	l, err := net.Listen("unix", sock)
	if err != nil {
		return err
	}
	var seq atomic.Int64
	for {
		c, err := l.Accept()
		if err != nil {
			return err
		}
		go func() {
			defer c.Close()
			if err := handle(c, filepath.Join(dir, fmt.Sprint(seq.Add(1)%8)), m); err != nil {
				fmt.Fprintln(os.Stderr, "floor:", err)
			}
		}()
	}
}

// handle runs one request: the spec on disk before the acknowledgement,
// the exit record on disk before the report. Each slot's two files are
// rewritten in place, so the filesystem frees no inode (runbox's rule).
func handle(c net.Conn, slot string, m mode) error {
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	argv := strings.Split(strings.TrimSuffix(line, "\n"), "\x00")
	code := 0
	if m.exec {
		if err := record(slot+".spec", []byte(line), m.durable); err != nil {
			return err
		}
		if code, err = spawn(argv); err != nil {
			return err
		}
		if err := record(slot+".exit", fmt.Appendf(nil, "{\"code\":%d}\n", code), m.durable); err != nil {
			return err
		}
	}
	var reply [5]byte
	reply[0] = 'A'
	binary.BigEndian.PutUint32(reply[1:], uint32(code))
	_, err = c.Write(reply[:])
	return err
}

// spawn forks and execs argv with no files open (os.StartProcess: a vfork
// and an exec, as tsp's server does with fork) and waits for it.
func spawn(argv []string) (int, error) {
	path, err := lookPath(argv[0])
	if err != nil {
		return 0, err
	}
	p, err := os.StartProcess(path, argv, &os.ProcAttr{})
	if err != nil {
		return 0, err
	}
	st, err := p.Wait()
	if err != nil {
		return 0, err
	}
	return st.ExitCode(), nil
}

var paths sync.Map // name → path: a daemon looks a command up once

func lookPath(name string) (string, error) {
	if p, ok := paths.Load(name); ok {
		return p.(string), nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", err
	}
	paths.Store(name, p)
	return p, nil
}

// record writes data over path's start and fdatasyncs it when durable.
func record(path string, data []byte, durable bool) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.WriteAt(data, 0); err != nil {
		return err
	}
	if durable {
		return syscall.Fdatasync(int(f.Fd()))
	}
	return nil
}
