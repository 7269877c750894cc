package gpu

import (
	"sort"
)

// Allocator hands a daemon's GPUs to runs, each GPU to one run at a time.
// It is not safe for concurrent use: the engine calls it under its own
// lock, with the scheduling decision it belongs to.
type Allocator struct {
	devs  []Device
	owner map[string]string // device index -> run id
}

// NewAllocator hands out devs.
func NewAllocator(devs []Device) *Allocator {
	return &Allocator{devs: devs, owner: map[string]string{}}
}

// Devices is the inventory.
func (a *Allocator) Devices() []Device { return a.devs }

// Free lists the indexes held by no run, in inventory order.
func (a *Allocator) Free() []string {
	var out []string
	for _, d := range a.devs {
		if _, held := a.owner[d.Index]; !held {
			out = append(out, d.Index)
		}
	}
	return out
}

// Want is how many GPUs a request for n means: all of them for n < 0.
func (a *Allocator) Want(n int) int {
	if n < 0 {
		return len(a.devs)
	}
	return n
}

// Check refuses a request that can never be met, naming what exists.
func (a *Allocator) Check(n int) error {
	return Inventory{Devices: a.devs}.Check(n)
}

// TakeFrom gives run n GPUs out of those listed as usable (a subset of
// Free), lowest index first; nil when there are not enough.
func (a *Allocator) TakeFrom(run string, n int, usable []string) []string {
	n = a.Want(n)
	if n == 0 || len(usable) < n {
		return nil
	}
	got := append([]string(nil), usable[:n]...)
	for _, idx := range got {
		a.owner[idx] = run
	}
	return got
}

// Hold records that run holds these GPUs (a run re-attached after a
// daemon restart keeps what it had).
func (a *Allocator) Hold(run string, idx []string) {
	for _, i := range idx {
		a.owner[i] = run
	}
}

// Release frees every GPU run holds.
func (a *Allocator) Release(run string) {
	for idx, r := range a.owner {
		if r == run {
			delete(a.owner, idx)
		}
	}
}

// Held lists what run holds, sorted.
func (a *Allocator) Held(run string) []string {
	var out []string
	for idx, r := range a.owner {
		if r == run {
			out = append(out, idx)
		}
	}
	sort.Strings(out)
	return out
}
