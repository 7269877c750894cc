package supervisor

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

const cgroupRoot = "/sys/fs/cgroup"

// memCgroup is a per-run memory cgroup, created below the supervisor's own
// cgroup so it inherits whatever limits the daemon runs under.
type memCgroup struct {
	dir string
	v2  bool
	fd  int // v2: directory fd for CLONE_INTO_CGROUP
}

// newMemCgroup creates a cgroup limited to limit bytes (no swap), trying
// the unified hierarchy first, then the v1 memory controller. It fails when
// neither is writable (not root, no delegation, controller not enabled).
func newMemCgroup(name string, limit int64) (*memCgroup, error) {
	own, err := ownCgroups()
	if err != nil {
		return nil, err
	}
	c, err2 := newCgroupV2(own, name, limit)
	if err2 == nil {
		return c, nil
	}
	c, err1 := newCgroupV1(own, name, limit)
	if err1 == nil {
		return c, nil
	}
	return nil, fmt.Errorf("no writable memory cgroup: v2: %w; v1: %w", err2, err1)
}

// ownCgroups maps controller ("" for the unified hierarchy) to the
// supervisor's cgroup path, from /proc/self/cgroup.
func ownCgroups() (map[string]string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for _, ctl := range strings.Split(parts[1], ",") {
			m[ctl] = parts[2]
		}
	}
	return m, nil
}

func newCgroupV2(own map[string]string, name string, limit int64) (*memCgroup, error) {
	path, ok := own[""]
	if !ok {
		return nil, errors.New("no unified hierarchy")
	}
	base := unifiedRoot()
	parent := filepath.Join(base, path)
	ctls, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return nil, err
	}
	if !hasWord(ctls, "memory") {
		return nil, errors.New("memory controller not available")
	}
	sub, _ := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if !hasWord(sub, "memory") {
		// Fails unless parent is the root cgroup or holds no processes.
		if err := writeCg(parent, "cgroup.subtree_control", "+memory"); err != nil {
			return nil, fmt.Errorf("enable memory controller: %w", err)
		}
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	c := &memCgroup{dir: dir, v2: true, fd: -1}
	if err := writeCg(dir, "memory.max", strconv.FormatInt(limit, 10)); err != nil {
		c.remove()
		return nil, err
	}
	_ = writeCg(dir, "memory.swap.max", "0")
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		c.remove()
		return nil, err
	}
	c.fd = fd
	return c, nil
}

func newCgroupV1(own map[string]string, name string, limit int64) (*memCgroup, error) {
	path, ok := own["memory"]
	if !ok {
		return nil, errors.New("no v1 memory controller")
	}
	dir := filepath.Join(cgroupRoot, "memory", path, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, err
	}
	c := &memCgroup{dir: dir, fd: -1}
	if err := writeCg(dir, "memory.limit_in_bytes", strconv.FormatInt(limit, 10)); err != nil {
		c.remove()
		return nil, err
	}
	// Without these the limit only pushes the run into swap.
	_ = writeCg(dir, "memory.memsw.limit_in_bytes", strconv.FormatInt(limit, 10))
	_ = writeCg(dir, "memory.swappiness", "0")
	return c, nil
}

func (c *memCgroup) String() string {
	if c.v2 {
		return "cgroup v2"
	}
	return "cgroup v1"
}

// attr makes a child start inside the cgroup (v2: clone3 CLONE_INTO_CGROUP,
// so not one page is charged elsewhere).
func (c *memCgroup) attr(a *syscall.SysProcAttr) {
	if c.v2 {
		a.UseCgroupFD = true
		a.CgroupFD = c.fd
	}
}

// add moves a just-started child into a v1 cgroup. The child has only run
// the dynamic loader by then; its descendants all start inside.
func (c *memCgroup) add(pid int) error {
	if c.v2 {
		return nil
	}
	return writeCg(c.dir, "cgroup.procs", strconv.Itoa(pid))
}

func (c *memCgroup) pids() []int {
	b, _ := os.ReadFile(filepath.Join(c.dir, "cgroup.procs"))
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if p, err := strconv.Atoi(f); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// oomKills is how many processes the kernel OOM killer killed in the cgroup.
func (c *memCgroup) oomKills() int {
	file := "memory.oom_control"
	if c.v2 {
		file = "memory.events"
	}
	b, _ := os.ReadFile(filepath.Join(c.dir, file))
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "oom_kill "); ok {
			n, _ := strconv.Atoi(strings.TrimSpace(v))
			return n
		}
	}
	return 0
}

func (c *memCgroup) remove() {
	if c.fd >= 0 {
		unix.Close(c.fd)
		c.fd = -1
	}
	// The last processes may still be exiting: EBUSY for a moment.
	for i := 0; i < 50; i++ {
		if err := os.Remove(c.dir); err == nil || errors.Is(err, os.ErrNotExist) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// MemoryLimitMode says how a memory limit would be enforced here, for Health.
func MemoryLimitMode() string {
	own, err := ownCgroups()
	if err != nil {
		return "rss watchdog"
	}
	if p, ok := own[""]; ok {
		base := unifiedRoot()
		ctls, _ := os.ReadFile(filepath.Join(base, p, "cgroup.controllers"))
		if hasWord(ctls, "memory") && unix.Access(filepath.Join(base, p), unix.W_OK) == nil {
			return "cgroup v2 (rss watchdog if the controller cannot be enabled)"
		}
	}
	if p, ok := own["memory"]; ok && unix.Access(filepath.Join(cgroupRoot, "memory", p), unix.W_OK) == nil {
		return "cgroup v1"
	}
	return "rss watchdog"
}

// unifiedRoot is where the cgroup v2 hierarchy is mounted: the cgroup
// root, or its "unified" directory in the hybrid layout.
func unifiedRoot() string {
	if _, err := os.Lstat(filepath.Join(cgroupRoot, "cgroup.controllers")); err == nil {
		return cgroupRoot
	}
	return filepath.Join(cgroupRoot, "unified")
}

func writeCg(dir, file, val string) error {
	return os.WriteFile(filepath.Join(dir, file), []byte(val), 0o644)
}

func hasWord(b []byte, w string) bool {
	for _, f := range strings.Fields(string(b)) {
		if f == w {
			return true
		}
	}
	return false
}
