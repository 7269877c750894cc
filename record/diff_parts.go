package record

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// The parts of a diff past the code: interpreter and packages, image,
// host and GPUs, limits and sandbox, outcome.

func interpChanges(a, b *Interpreter) []Change {
	if a == nil && b == nil {
		return nil
	}
	if a == nil {
		a = &Interpreter{}
	}
	if b == nil {
		b = &Interpreter{}
	}
	var cs []Change
	if a.Version != b.Version {
		cs = append(cs, Change{Kind: "interpreter", Name: "version", A: a.Version, B: b.Version})
	}
	if a.Path != b.Path && a.Path != "" && b.Path != "" {
		cs = append(cs, Change{Kind: "interpreter", Name: "path", A: a.Path, B: b.Path})
	}
	if a.Conda != b.Conda {
		cs = append(cs, Change{Kind: "interpreter", Name: "conda env", A: a.Conda, B: b.Conda})
	}
	if (a.Packages == nil) != (b.Packages == nil) {
		cs = append(cs, Change{Kind: "package", Detail: "packages recorded for one run only: " + firstNonEmpty(a.Note, b.Note)})
		return cs
	}
	for _, c := range mapChanges("package", a.Packages, b.Packages) {
		switch {
		case c.A == "":
			c.Detail = "added"
		case c.B == "":
			c.Detail = "removed"
		case versionLess(c.B, c.A):
			c.Detail = "downgraded"
		default:
			c.Detail = "upgraded"
		}
		cs = append(cs, c)
	}
	return cs
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// versionLess compares dotted versions numerically where it can.
func versionLess(a, b string) bool {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(pa) && i < len(pb); i++ {
		na, ea := strconv.Atoi(pa[i])
		nb, eb := strconv.Atoi(pb[i])
		if ea == nil && eb == nil {
			if na != nb {
				return na < nb
			}
			continue
		}
		if pa[i] != pb[i] {
			return pa[i] < pb[i]
		}
	}
	return len(pa) < len(pb)
}

func imageChanges(a, b *Image) []Change {
	if a == nil && b == nil {
		return nil
	}
	if a == nil {
		a = &Image{}
	}
	if b == nil {
		b = &Image{}
	}
	var cs []Change
	if a.Name != b.Name {
		cs = append(cs, Change{Kind: "image", Name: "name", A: a.Name, B: b.Name})
	}
	if a.ID != b.ID && a.ID != "" && b.ID != "" {
		cs = append(cs, Change{Kind: "image", Name: "id", A: short(strings.TrimPrefix(a.ID, "sha256:")), B: short(strings.TrimPrefix(b.ID, "sha256:"))})
	}
	if a.Digest != b.Digest && a.Digest != "" && b.Digest != "" {
		cs = append(cs, Change{Kind: "image", Name: "digest", A: a.Digest, B: b.Digest})
	}
	return cs
}

func hostChanges(a, b *Host) []Change {
	if a == nil || b == nil {
		return nil // a record not completed: the host is unknown, not different
	}
	var cs []Change
	add := func(kind, name, va, vb string) {
		if va != vb {
			cs = append(cs, Change{Kind: kind, Name: name, A: va, B: vb})
		}
	}
	add("host", "hostname", a.Hostname, b.Hostname)
	add("host", "os", a.OS+"/"+a.Arch, b.OS+"/"+b.Arch)
	add("host", "kernel", a.Kernel, b.Kernel)
	add("host", "cpu", a.CPUModel, b.CPUModel)
	add("host", "cpus", strconv.Itoa(a.CPUs), strconv.Itoa(b.CPUs))
	add("host", "memory", bytesText(a.MemoryBytes), bytesText(b.MemoryBytes))
	add("gpu", "models", gpuText(a.GPUs), gpuText(b.GPUs))
	add("gpu", "driver", a.Driver, b.Driver)
	add("gpu", "cuda", a.CUDA, b.CUDA)
	return cs
}

func gpuText(gs []GPU) string {
	var s []string
	for _, g := range gs {
		s = append(s, g.Name)
	}
	return strings.Join(s, ", ")
}

func bytesText(n uint64) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
}

func limitChanges(a, b *Record) []Change {
	var cs []Change
	add := func(kind, name, va, vb string) {
		if va != vb {
			cs = append(cs, Change{Kind: kind, Name: name, A: va, B: vb})
		}
	}
	la, lb := a.Limits, b.Limits
	num := func(v float64) string {
		if v == 0 {
			return ""
		}
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	add("limits", "memory", num(float64(la.MemoryBytes)), num(float64(lb.MemoryBytes)))
	add("limits", "cpus", num(la.CPUs), num(lb.CPUs))
	add("limits", "pids", num(float64(la.Pids)), num(float64(lb.Pids)))
	add("limits", "timeout", num(la.TimeoutSeconds), num(lb.TimeoutSeconds))
	add("limits", "gpus", la.GPUs, lb.GPUs)
	add("limits", "network", la.Network, lb.Network)
	add("sandbox", "backend", a.Sandbox, b.Sandbox)
	add("sandbox", "isolate", a.Isolate, b.Isolate)
	return cs
}

func outcomeChanges(a, b Side) []Change {
	var cs []Change
	add := func(name, va, vb string) {
		if va != vb {
			cs = append(cs, Change{Kind: "outcome", Name: name, A: va, B: vb})
		}
	}
	add("state", a.State, b.State)
	code := func(p *int) string {
		if p == nil {
			return ""
		}
		return strconv.Itoa(*p)
	}
	add("exit", code(a.ExitCode), code(b.ExitCode))
	add("failure", a.FailureCode, b.FailureCode)
	num := func(m map[string]float64, k string) string {
		v, ok := m[k]
		if !ok {
			return ""
		}
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	keys := map[string]string{}
	for k := range a.Metrics {
		keys[k] = ""
	}
	for k := range b.Metrics {
		keys[k] = ""
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		add("metric "+k, num(a.Metrics, k), num(b.Metrics, k))
	}
	return cs
}
