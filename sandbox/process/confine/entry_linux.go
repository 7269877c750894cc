package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// Exit codes of the confine entry, as the supervisor's own: 125 when the
// confinement could not be applied (the command never ran), 126/127 when
// the command could not be exec'd.
const (
	codeConfine    = 125
	codeCannotExec = 126
	codeNotFound   = 127
)

// Main is the confine entry: `EXE Arg POLICY PATH ARGV...` (args are what
// follows Arg). It restricts this process as POLICY says, then execs PATH
// with ARGV and the environment it was given. It returns only on failure,
// with the exit code for it, having said why on stderr.
func Main(args []string) int {
	if len(args) < 3 {
		fmt.Fprintf(os.Stderr, "usage: %s POLICY PATH ARGV...\n", Arg)
		return 2
	}
	// prctl and exec must happen on one thread: the attributes set here
	// are per thread until exec makes them the new program's.
	runtime.LockOSThread()
	p, err := decodePolicy(args[0])
	if err == nil {
		err = apply(p, args[1])
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "runbox: --isolate %s: %v\n", p.Level, err)
		return codeConfine
	}
	err = syscall.Exec(args[1], args[2:], os.Environ())
	code := codeNotFound
	if errors.Is(err, syscall.EACCES) || errors.Is(err, syscall.EPERM) {
		code = codeCannotExec
		if p.Level.Filesystem() {
			fmt.Fprintf(os.Stderr, "runbox: %s: permission denied: --isolate %s lets a run execute only system directories, the workspace and --rw paths (pass --rw %s, or --isolate none)\n", args[2], p.Level, filepath.Dir(args[1]))
			return code
		}
	}
	fmt.Fprintf(os.Stderr, "runbox: %s: %v\n", args[2], err)
	return code
}

// apply restricts this process (and so everything it execs) to p. The
// confine entry was started in new namespaces (Wrap): a mount namespace
// always, a network namespace for a network cut.
func apply(p Policy, cmdPath string) error {
	if p.Level.Network() {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bring up loopback: %w", err)
		}
	}
	if err := privateMounts(p, cmdPath); err != nil {
		return err
	}
	return restrict(p, cmdPath)
}

// loopbackUp sets the new network namespace's lo up, so a run can still
// talk to servers it starts itself on 127.0.0.1.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
