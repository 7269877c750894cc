package record

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// hostTTL is how long the host's facts are reused: a driver upgrade shows
// in records within minutes, and nvidia-smi (slow) runs rarely.
const hostTTL = 5 * time.Minute

type hostCache struct {
	mu   sync.Mutex
	at   time.Time
	host *Host
}

var hosts hostCache

// HostFacts returns this machine's facts (cached for hostTTL).
func HostFacts(ctx context.Context) *Host {
	hosts.mu.Lock()
	defer hosts.mu.Unlock()
	if hosts.host != nil && time.Since(hosts.at) < hostTTL {
		h := *hosts.host
		return &h
	}
	h := &Host{OS: runtime.GOOS, Arch: runtime.GOARCH, CPUs: runtime.NumCPU()}
	h.Hostname, _ = os.Hostname()
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = strings.TrimSpace(string(b))
	}
	h.CPUModel = procField("/proc/cpuinfo", "model name")
	if kb := procField("/proc/meminfo", "MemTotal"); kb != "" {
		n, _ := strconv.ParseUint(strings.TrimSuffix(kb, " kB"), 10, 64)
		h.MemoryBytes = n << 10
	}
	nvidia(ctx, h)
	hosts.host, hosts.at = h, time.Now()
	c := *h
	return &c
}

// procField returns the value of the first "name: value" line of a /proc file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

var cudaVersion = lazyRegexp(`CUDA Version:\s*([0-9.]+)`)

// nvidia adds the NVIDIA GPUs, driver and CUDA version, when nvidia-smi
// is on the daemon's PATH.
func nvidia(ctx context.Context, h *Host) {
	smi, err := exec.LookPath("nvidia-smi")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, smi, "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return
	}
	for _, l := range nonEmptyLines(string(out)) {
		f := strings.Split(l, ",")
		if len(f) < 3 {
			continue
		}
		mib, _ := strconv.ParseUint(strings.TrimSpace(f[1]), 10, 64)
		h.GPUs = append(h.GPUs, GPU{Name: strings.TrimSpace(f[0]), MemoryBytes: mib << 20})
		h.Driver = strings.TrimSpace(f[2])
	}
	if out, err := exec.CommandContext(ctx, smi).Output(); err == nil {
		if m := cudaVersion().FindSubmatch(out); m != nil {
			h.CUDA = string(m[1])
		}
	}
}
