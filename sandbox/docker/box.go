package docker

import (
	"debug/elf"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/docker/docker/api/types/mount"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// A box is the host directory a container's init works in (BoxMount):
// it finds its spec there, writes the run log (a hard link to
// Spec.LogPath, so the bytes land in the run's own file at file speed)
// and leaves its exit record there. It is the run's StateDir/box, or a
// pooled container's directory under Options.PoolDir.

// boxModes are the permissions of a box and its files: private when the
// container runs as the daemon's own uid; open to the container's uid
// otherwise (no chown without root), which exposes nothing on the host
// because the box lies inside the home, which only its owner can enter.
func boxModes(user string) (dir, file os.FileMode) {
	uid, _, _ := strings.Cut(user, ":")
	if n, err := strconv.Atoi(uid); err == nil && n == os.Getuid() {
		return 0o700, 0o600
	}
	return 0o777, 0o666
}

// makeBox creates an empty box (removing what an earlier try left).
func makeBox(dir, user string) error {
	dmode, _ := boxModes(user)
	os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("make container box: %w", err)
	}
	if err := os.Chmod(dir, dmode); err != nil {
		return fmt.Errorf("make container box: %w", err)
	}
	return nil
}

// fillBox puts the run's spec and log into box. The log is linked in;
// where it cannot be (another filesystem), mount, if given, receives a
// bind mount of the log file instead (a box made at create time), else
// the error is returned.
func fillBox(box, logPath, user string, inner sandbox.Spec, mounts *[]mount.Mount) error {
	_, fmode := boxModes(user)
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("create run log: %w", err)
	}
	f.Close()
	if err := os.Chmod(logPath, fmode); err != nil {
		return fmt.Errorf("create run log: %w", err)
	}
	link := filepath.Join(box, logName)
	os.Remove(link)
	if err := os.Link(logPath, link); err != nil {
		if mounts == nil {
			return fmt.Errorf("link run log into the container box: %w", err)
		}
		abs, aerr := filepath.Abs(logPath)
		if aerr != nil {
			return aerr
		}
		*mounts = append(*mounts, mount.Mount{Type: mount.TypeBind, Source: abs, Target: BoxMount + "/" + logName})
	}
	return supervisor.WriteBoot(box, inner, fmode)
}

// checkStatic makes sure exe can run in any image: a binary with an ELF
// interpreter needs a libc the image may not have, and would fail inside
// the container with a bare "no such file or directory".
func checkStatic(exe string) error {
	f, err := elf.Open(exe)
	if err != nil {
		return fmt.Errorf("runbox binary %s for the container's init: %w", exe, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("runbox binary %s is dynamically linked and cannot be a container's init; build it with CGO_ENABLED=0", exe)
		}
	}
	return nil
}
