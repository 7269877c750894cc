// Package gpu knows which GPUs a daemon may hand out and who holds each:
// the inventory comes from nvidia-smi, or from the set the user declares
// (RUNBOX_GPUS=0,2), which also keeps runbox off GPUs others use.
package gpu

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// EnvVar declares the GPUs a daemon may use, by index or UUID.
const EnvVar = "RUNBOX_GPUS"

// Device is one GPU the daemon may hand out.
type Device struct {
	Index     string `json:"index"` // what CUDA_VISIBLE_DEVICES gets
	UUID      string `json:"uuid,omitempty"`
	Name      string `json:"name,omitempty"`
	MemoryMiB int64  `json:"memory_mib,omitempty"`
	// Apple is Apple silicon's one GPU: held exclusively, no
	// CUDA_VISIBLE_DEVICES.
	Apple bool `json:"apple,omitempty"`
}

// Inventory is the daemon's GPUs and where it learnt of them.
type Inventory struct {
	Devices []Device `json:"devices"`
	Source  string   `json:"source"` // "RUNBOX_GPUS", "nvidia-smi", "apple", "none"
}

// Apple says the set is Apple silicon's one GPU: held by a run for
// exclusivity only, with nothing to name in its environment.
func (inv Inventory) Apple() bool {
	return len(inv.Devices) > 0 && inv.Devices[0].Apple
}

// Check refuses a request for n of these GPUs (n < 0: all) that can
// never be met, naming what exists: a run asking for more GPUs than the
// daemon knows would wait forever.
func (inv Inventory) Check(n int) error {
	if len(inv.Devices) == 0 {
		return fmt.Errorf("no GPUs are known to the daemon: nvidia-smi found none; declare them with %s=0,1 in the daemon's environment and restart the daemon", EnvVar)
	}
	if n > len(inv.Devices) {
		return fmt.Errorf("--gpus %d asks for more GPUs than the daemon has: %d known (%s)", n, len(inv.Devices), inv.describe())
	}
	return nil
}

func (inv Inventory) describe() string {
	var parts []string
	for _, d := range inv.Devices {
		s := d.Index
		if d.Name != "" {
			s += ": " + d.Name
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, ", ")
}

// ParseCount reads --gpus for a run handed this host's GPUs: a count, or
// all (-1). ok is false for a value that asks for none ("") or names
// devices (device=0,1: a container's own choice, not counted).
func ParseCount(v string) (n int, ok bool, err error) {
	switch {
	case v == "":
		return 0, false, nil
	case v == "all":
		return -1, true, nil
	case strings.HasPrefix(v, "device="):
		return 0, false, nil
	}
	n, err = strconv.Atoi(v)
	if err != nil || n <= 0 {
		return 0, false, fmt.Errorf("--gpus %q: want a number of GPUs (1, 2, ...) or all", v)
	}
	return n, true, nil
}

// Reserve is how many of these GPUs a run asking --gpus v must have
// reserved before it starts (-1: all; 0: none, or devices it names
// itself), or why it can never get them.
func (inv Inventory) Reserve(v string) (int, error) {
	n, counted, err := ParseCount(v)
	if err != nil || !counted {
		return 0, err
	}
	if err := inv.Check(n); err != nil {
		return 0, err
	}
	return n, nil
}

// QueryArgs is the nvidia-smi call whose output ParseNvidiaSMI reads.
var QueryArgs = []string{"--query-gpu=index,uuid,name,memory.total", "--format=csv,noheader"}

// ParseNvidiaSMI reads `nvidia-smi --query-gpu=index,uuid,name,memory.total
// --format=csv,noheader` (with or without nounits). A GPU name never holds
// a comma in NVIDIA's naming, but the name is taken as everything between
// the UUID and the last field so one that did would still parse.
func ParseNvidiaSMI(out []byte) ([]Device, error) {
	var devs []Device
	sc := bufio.NewScanner(bytes.NewReader(out))
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 4 {
			return nil, fmt.Errorf("nvidia-smi line %d %q: want index, uuid, name, memory.total", n, line)
		}
		idx := strings.TrimSpace(f[0])
		if _, err := strconv.Atoi(idx); err != nil {
			return nil, fmt.Errorf("nvidia-smi line %d: index %q is not a number", n, idx)
		}
		d := Device{
			Index: idx,
			UUID:  strings.TrimSpace(f[1]),
			Name:  strings.TrimSpace(strings.Join(f[2:len(f)-1], ",")),
		}
		mem := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(f[len(f)-1]), "MiB"))
		if m, err := strconv.ParseInt(mem, 10, 64); err == nil {
			d.MemoryMiB = m
		} // "[N/A]" on some MIG and vGPU setups: the memory is unknown, the GPU is real
		devs = append(devs, d)
	}
	return devs, sc.Err()
}

// ParseDeclared reads RUNBOX_GPUS: indexes or UUIDs, comma-separated.
// Known devices (from nvidia-smi) fill in the names; a UUID is handed out
// as itself (CUDA_VISIBLE_DEVICES accepts UUIDs).
func ParseDeclared(v string, known []Device) ([]Device, error) {
	var out []Device
	seen := map[string]bool{}
	for _, p := range strings.Split(v, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		if seen[p] {
			return nil, fmt.Errorf("%s: %s is listed twice", EnvVar, p)
		}
		seen[p] = true
		d := Device{Index: p}
		isIndex := true
		if _, err := strconv.Atoi(p); err != nil {
			if !strings.HasPrefix(p, "GPU-") && !strings.HasPrefix(p, "MIG-") {
				return nil, fmt.Errorf("%s: %q is neither a GPU index nor a UUID (GPU-...)", EnvVar, p)
			}
			isIndex = false
		}
		for _, k := range known {
			if (isIndex && k.Index == p) || (!isIndex && k.UUID == p) {
				d.UUID, d.Name, d.MemoryMiB = k.UUID, k.Name, k.MemoryMiB
			}
		}
		out = append(out, d)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s=%q declares no GPU", EnvVar, v)
	}
	return out, nil
}

// Detect finds the daemon's GPUs: RUNBOX_GPUS (declared) wins, else
// nvidia-smi, else Apple silicon's one GPU. getenv is os.Getenv in the
// daemon (a parameter so tests need not touch the process environment).
func Detect(ctx context.Context, getenv func(string) string) (Inventory, error) {
	var known []Device
	if smi, err := exec.LookPath("nvidia-smi"); err == nil {
		ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		out, err := exec.CommandContext(ctx, smi, QueryArgs...).Output()
		cancel()
		if err == nil {
			known, _ = ParseNvidiaSMI(out)
		}
	}
	if v := strings.TrimSpace(getenv(EnvVar)); v != "" {
		devs, err := ParseDeclared(v, known)
		if err != nil {
			return Inventory{Source: "none"}, err
		}
		return Inventory{Devices: devs, Source: EnvVar}, nil
	}
	if len(known) > 0 {
		return Inventory{Devices: known, Source: "nvidia-smi"}, nil
	}
	if runtime.GOOS == "darwin" && runtime.GOARCH == "arm64" {
		return Inventory{Devices: []Device{{Index: "0", Name: "Apple silicon GPU (Metal)", Apple: true}}, Source: "apple"}, nil
	}
	return Inventory{Source: "none"}, nil
}
