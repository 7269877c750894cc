package confine

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
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

// apply restricts this process (and so everything it execs) to p.
func apply(p Policy, cmdPath string) error {
	if p.Level.Network() {
		if err := loopbackUp(); err != nil {
			return fmt.Errorf("bring up loopback: %w", err)
		}
	}
	if err := maskSockets(p.Mask); err != nil {
		return err
	}
	// Give up what nsAttr lent: the command holds no capability unless
	// it is root inside its namespace.
	if err := dropCaps(); err != nil {
		return err
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	abi, _ := ll.LandlockGetABIVersion()
	if disabled("landlock") {
		abi = 0
	}
	if abi < 1 {
		if p.Level.Filesystem() {
			return errors.New("the kernel has no Landlock: the filesystem cannot be confined")
		}
		return nil // net only: no_new_privs is what is left to do
	}
	cfg := landlock.Config{Scoped: landlock.V11.Scoped}
	if p.Level.Filesystem() {
		cfg.HandledAccessFS = landlock.V11.HandledAccessFS
	}
	if err := cfg.BestEffort().Restrict(fsRules(p, cmdPath)...); err != nil {
		return fmt.Errorf("landlock: %w", err)
	}
	return nil
}

// fsRules is what a confined run may read, execute and write.
func fsRules(p Policy, cmdPath string) []landlock.Rule {
	if !p.Level.Filesystem() {
		return nil
	}
	var roDirs, roFiles, rwDirs, rwFiles []string
	add := func(dirs, files *[]string, paths ...string) {
		for _, x := range paths {
			if st, err := os.Stat(x); err == nil && st.IsDir() {
				*dirs = append(*dirs, x)
			} else if err == nil {
				*files = append(*files, x)
			}
		}
	}
	add(&roDirs, &roFiles, p.RO...)
	add(&roDirs, &roFiles, cmdPath)
	add(&rwDirs, &rwFiles, p.Workdir)
	if p.TempDir != "" {
		add(&rwDirs, &rwFiles, p.TempDir)
	}
	add(&rwDirs, &rwFiles, p.RW...)
	return []landlock.Rule{
		landlock.RODirs(SystemRO...).IgnoreIfMissing(),
		landlock.RODirs(roDirs...),
		landlock.ROFiles(roFiles...),
		landlock.RWDirs(rwDirs...).WithRefer().WithResolveUnix(),
		landlock.RWFiles(rwFiles...),
		// Devices every program expects; ioctl for terminals.
		landlock.RWFiles("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx").WithIoctlDev().IgnoreIfMissing(),
		landlock.RWDirs("/dev/pts", "/dev/shm").WithIoctlDev().IgnoreIfMissing(),
	}
}

// maskSockets hides sockets the run must not reach (Policy.Mask) in its
// own mount namespace: /dev/null is bound over each, so connecting fails.
// The namespace's mounts are made private first, or the masks would
// propagate back to the host's.
func maskSockets(paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("private mounts: %w", err)
	}
	for _, p := range paths {
		if err := unix.Mount("/dev/null", p, "", unix.MS_BIND, ""); err != nil {
			return fmt.Errorf("mask %s: %w", p, err)
		}
	}
	return nil
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
