package host

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/gpu"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Campaign scheduling: what keeps a queued run waiting besides the
// daemon's parallel limit — the runs it comes after, its sweep's limit,
// the GPUs it asks for — and the reason each waiting run shows. All of it
// is decided in schedule, under the engine's lock, in queue order.
//
// GPU policy (docs/RATIONALE.md, "GPUs: reservation for the head"): the
// first run in the queue that waits for GPUs reserves the GPUs that are
// free now and one slot, so that nothing behind it can take what it is
// waiting for; runs behind it may still start on what it has not
// reserved (backfill that never delays the head). A four-GPU run cannot
// starve behind a stream of one-GPU runs.
type campaigns struct {
	inv   gpu.Inventory
	alloc *gpu.Allocator
	// info is the campaign part of every queued or active run that has
	// one.
	info map[string]*store.Campaign
	// sweeps are the live sweeps' limits and failure counts, loaded from
	// the store on first use.
	sweeps map[string]*sweepState
	// waiting is why each queued run has not started (schedule writes it).
	waiting map[string]waitReason
	// ended caches the final state of runs others wait for.
	ended map[string]store.State
	// grouped holds the started members of a backend's groups, which the
	// backend limits, not the daemon's slots (backendheld.go); recovering
	// holds new groups back while Recover re-queues runs one by one.
	grouped    map[string]bool
	recovering bool
	// retry serialises retries of sweep members: a member has one live
	// attempt at a time (sweep.go: retryMember).
	retry sync.Mutex
}

type sweepState struct {
	parallel, maxFailures int
	// failed holds the members (by index) whose latest attempt failed:
	// --max-failures counts members, not attempts, so a retry that
	// takes a failed member's place takes its failure away; replaced
	// are the attempts a retry took the place of, whose ends no longer
	// count (docs/RATIONALE.md, campaigns).
	failed   map[int]bool
	replaced map[string]bool
	stopped  string
	complete bool // every member created
}

// waitReason is why a queued run waits; dep names the run it waits for,
// whose progress is added when the reason is shown.
type waitReason struct {
	text string
	dep  string
}

func newCampaigns(inv gpu.Inventory) *campaigns {
	return &campaigns{
		inv:     inv,
		alloc:   gpu.NewAllocator(inv.Devices),
		info:    map[string]*store.Campaign{},
		sweeps:  map[string]*sweepState{},
		waiting: map[string]waitReason{},
		ended:   map[string]store.State{},
		grouped: map[string]bool{},
	}
}

// GPUs is the daemon's GPU inventory and which are free now.
func (e *Engine) GPUs() (gpu.Inventory, []string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.camp.inv, e.camp.alloc.Free()
}

// campaignOf checks a request's dependencies and returns its campaign part
// (nil for a plain run): with the GPUs its backend's admission said the
// queue must reserve for it (-1: all). base carries a sweep's part.
func (e *Engine) campaignOf(ctx context.Context, gpus int, req api.RunRequest, base *store.Campaign) (*store.Campaign, error) {
	c := &store.Campaign{}
	if base != nil {
		*c = *base
	}
	for _, ref := range req.After {
		for _, one := range strings.Split(ref, ",") {
			one = strings.TrimSpace(one)
			if one == "" {
				// An empty name (--after "", "12,") started the run
				// with no dependency, saying nothing.
				return nil, badRequest("--after %q names no run: give run numbers, ids or @last, separated by commas", ref)
			}
			dep, err := e.cfg.Store.GetRun(ctx, one)
			if err != nil {
				if store.IsNotFound(err) {
					return nil, badRequest("--after %s: no such run", one)
				}
				return nil, err
			}
			if !slices.Contains(c.After, dep.ID) {
				c.After = append(c.After, dep.ID)
			}
		}
	}
	if req.AfterAny && len(c.After) == 0 {
		return nil, badRequest("--after-any needs --after RUN")
	}
	c.AfterAny = req.AfterAny
	if gpus != 0 {
		c.GPUs = gpus
	}
	if c.Sweep == "" && len(c.After) == 0 && c.GPUs == 0 {
		return nil, nil
	}
	return c, nil
}

// gated reports whether a run must go through the queue's checks (it
// cannot take a free slot at once): it has dependencies, asks for GPUs or
// belongs to a sweep. Known from the request, before its place in line
// is taken.
func gated(req api.RunRequest, base *store.Campaign) bool {
	return base != nil || len(req.After) > 0 || req.GPUs != ""
}

// trackCampaign registers a run's campaign part (at submit and recovery);
// a re-attached run keeps the GPUs it held.
func (e *Engine) trackCampaign(id string, c *store.Campaign, started bool) {
	if c == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.camp.info[id] = c
	if started && len(c.Devices) > 0 {
		e.camp.alloc.Hold(id, c.Devices)
	}
}

// campaignEnded lets go of what an ended run held and counts a sweep
// member's failure; called from finish before the queue is looked at
// again.
func (e *Engine) campaignEnded(id string) {
	e.mu.Lock()
	c := e.camp.info[id]
	delete(e.camp.info, id)
	delete(e.camp.waiting, id)
	delete(e.camp.grouped, id)
	e.camp.alloc.Release(id)
	e.mu.Unlock()
	run, err := e.cfg.Store.GetRun(e.ctx, id)
	if err != nil {
		return
	}
	run = e.withUnrecorded(run)
	e.mu.Lock()
	if run.State.Terminal() {
		e.camp.ended[id] = run.State
	}
	dependents := e.heldAfterLocked(id, run.State)
	var stop *sweepStop
	if c != nil && c.Sweep != "" && memberFailed(run.State) {
		if st := e.sweepStateLocked(c.Sweep); st != nil && !st.replaced[id] {
			if st.failed == nil {
				st.failed = map[int]bool{}
			}
			st.failed[c.Index] = true
			if n := len(st.failed); st.maxFailures > 0 && n >= st.maxFailures && st.stopped == "" {
				st.stopped = fmt.Sprintf("sweep stopped: %d member(s) failed (--max-failures %d)", n, st.maxFailures)
				stop = &sweepStop{id: c.Sweep, reason: st.stopped}
			}
		}
	}
	e.mu.Unlock()
	if c != nil && c.Sweep != "" {
		go e.releaseSweepSnapshot(c.Sweep) // sweepsnap.go
	}
	if stop != nil {
		e.persistStop(stop)
		go e.stopPendingMembers(stop.id, stop.reason) // backendheld.go
	}
	for _, r := range dependents {
		r.mu.Lock()
		r.stopWhy = depEnded(runName(run.ID, run.Short), run.State)
		r.mu.Unlock()
		go r.stop(context.WithoutCancel(e.ctx), 0)
	}
}

type sweepStop struct{ id, reason string }

func (e *Engine) persistStop(s *sweepStop) {
	if _, err := e.cfg.Store.UpdateSweep(context.WithoutCancel(e.ctx), s.id, func(sw *store.Sweep) error {
		if sw.Stopped == "" {
			sw.Stopped = s.reason
		}
		return nil
	}); err != nil {
		e.log.Error("sweep: record stop", "sweep", s.id, "err", err)
	}
}

// sweepStateLocked returns a sweep's live state, reading the sweep and
// its ended members from the store the first time (after a restart the
// failures so far still count). Called with e.mu held.
func (e *Engine) sweepStateLocked(id string) *sweepState {
	if st := e.camp.sweeps[id]; st != nil {
		return st
	}
	sw, err := e.cfg.Store.GetSweep(e.ctx, id)
	if err != nil {
		return nil
	}
	st := &sweepState{parallel: sw.Parallel, maxFailures: sw.MaxFailures, stopped: sw.Stopped, complete: sw.Complete,
		failed: map[int]bool{}, replaced: map[string]bool{}}
	if runs, err := e.cfg.Store.ListRuns(e.ctx, store.Filter{Sweep: id}); err == nil {
		for idx, att := range memberAttempts(runs) {
			for _, r := range att[:len(att)-1] {
				st.replaced[r.ID] = true
			}
			if memberFailed(att[len(att)-1].State) {
				st.failed[idx] = true
			}
		}
	}
	e.camp.sweeps[id] = st
	return st
}

// depState is how a queued run stands towards the runs it comes after:
// ready, waiting (for dep), or cancelled (with the reason).
func (e *Engine) depStateLocked(c *store.Campaign) (ready bool, wait waitReason, cancel string) {
	for _, dep := range c.After {
		st, ok := e.camp.ended[dep]
		if !ok {
			if _, live := e.done[dep]; live {
				return false, waitReason{text: "waiting for " + dep, dep: dep}, ""
			}
			run, err := e.cfg.Store.GetRun(e.ctx, dep)
			if err != nil {
				return false, waitReason{text: "waiting for " + dep + " (it cannot be read: " + err.Error() + ")"}, ""
			}
			if !run.State.Terminal() {
				return false, waitReason{text: "waiting for " + dep, dep: dep}, ""
			}
			st = run.State
			e.camp.ended[dep] = st
		}
		if st != store.Succeeded && !c.AfterAny {
			return false, waitReason{}, depEnded(e.depNameLocked(dep), st)
		}
	}
	return true, waitReason{}, ""
}

// runName is how reasons name a run: by its number, as the waiting
// reason does ("waiting for 12", "dependency 12 failed"); by id when it
// has none.
func runName(id, short string) string {
	if short != "" {
		return short
	}
	return id
}

// depEnded is the reason a run is cancelled for its dependency's end:
// "dependency 12 failed".
func depEnded(name string, st store.State) string { return "dependency " + name + " " + string(st) }

// depNameLocked is runName of dependency id (read from the store: only
// when a run is cancelled for it). Called with e.mu held.
func (e *Engine) depNameLocked(id string) string {
	if run, err := e.cfg.Store.GetRun(e.ctx, id); err == nil {
		return runName(run.ID, run.Short)
	}
	return id
}

// queueDecision is one pass of the scheduler over the queue: who starts,
// who is cancelled, why the others wait.
type queueDecision struct {
	start   []string
	devices map[string][]string
	cancel  map[string]string
	// chain makes a run started before the runs it comes after have
	// ended wait for them in its backend (sandbox.Chainer).
	chain map[string]func(*sandbox.Spec)
	// group: the started runs that go in their sweep's group in their
	// backend (run → sweep; sandbox.Grouper).
	group map[string]string
}

// decideLocked walks the queue in order and decides, without starting
// anything. Called with e.mu held.
func (e *Engine) decideLocked() queueDecision {
	d := queueDecision{devices: map[string][]string{}, cancel: map[string]string{}, chain: map[string]func(*sandbox.Spec){}, group: map[string]string{}}
	active := len(e.active) - e.groupedActiveLocked() // their backend limits those (backendheld.go)
	limit := e.cfg.MaxParallel
	sweepActive := map[string]int{}
	for id := range e.active {
		if c := e.camp.info[id]; c != nil && c.Sweep != "" {
			sweepActive[c.Sweep]++
		}
	}
	free := e.camp.alloc.Free()
	reserved := map[string]bool{}
	reservedSlots := 0
	headWaits := false // a GPU run already holds the reservation
	for _, id := range e.queue {
		if e.unready[id] {
			// Still being written: nothing behind it starts first.
			break
		}
		if e.pending[id] == nil {
			continue
		}
		c := e.camp.info[id]
		if c != nil && len(c.After) > 0 {
			ok, wait, cancel := e.depStateLocked(c)
			if cancel != "" {
				d.cancel[id] = cancel
				continue
			}
			if !ok {
				chain := e.chainLocked(id, c)
				if chain == nil {
					e.camp.waiting[id] = wait
					continue
				}
				d.chain[id] = chain // its backend holds it (backendheld.go)
			}
		}
		if c != nil && c.Sweep != "" {
			if st := e.sweepStateLocked(c.Sweep); st != nil {
				if st.stopped != "" {
					d.cancel[id] = st.stopped
					continue
				}
				if e.groupedLocked(id) { // backendheld.go
					if !st.complete || e.camp.recovering {
						e.camp.waiting[id] = waitReason{text: "waiting for the sweep's other members (one " + e.groupName(id) + ")"}
						continue
					}
					delete(e.camp.waiting, id)
					d.start = append(d.start, id)
					d.group[id] = c.Sweep
					continue
				}
				if st.parallel > 0 && sweepActive[c.Sweep] >= st.parallel {
					e.camp.waiting[id] = waitReason{text: fmt.Sprintf("sweep limit %d reached", st.parallel)}
					continue
				}
			}
		}
		// GPUs are looked at before slots: a run short of both says it
		// waits for GPUs, the scarcer of the two.
		var usable []string
		if c != nil && c.GPUs != 0 {
			for _, g := range free {
				if !reserved[g] {
					usable = append(usable, g)
				}
			}
			want := e.camp.alloc.Want(c.GPUs)
			if len(usable) < want {
				e.camp.waiting[id] = waitReason{text: gpuWait(want, free)}
				if !headWaits {
					headWaits = true
					for _, g := range usable {
						reserved[g] = true
					}
					reservedSlots++
				}
				continue
			}
		}
		if active+reservedSlots >= limit {
			e.camp.waiting[id] = waitReason{text: fmt.Sprintf("waiting for a slot (%d running, limit %d)", active, limit)}
			continue
		}
		if c != nil && c.GPUs != 0 {
			devs := e.camp.alloc.TakeFrom(id, c.GPUs, usable)
			free = slices.DeleteFunc(free, func(g string) bool { return slices.Contains(devs, g) })
			d.devices[id] = devs
		}
		delete(e.camp.waiting, id)
		d.start = append(d.start, id)
		active++
		if c != nil && c.Sweep != "" {
			sweepActive[c.Sweep]++
		}
	}
	return d
}

func gpuWait(want int, free []string) string {
	s := fmt.Sprintf("waiting for %d GPU", want)
	if want != 1 {
		s += "s"
	}
	if len(free) == 0 {
		return s + " (none free)"
	}
	return s + fmt.Sprintf(" (%d free: %s)", len(free), strings.Join(free, ","))
}

// waitingReason is what a queued run shows: why it waits, with the
// progress of the run it waits for.
func (e *Engine) waitingReason(ctx context.Context, id string) string {
	e.mu.Lock()
	w, ok := e.camp.waiting[id]
	e.mu.Unlock()
	if !ok {
		return ""
	}
	if w.dep == "" {
		return w.text
	}
	dep, err := e.cfg.Store.GetRun(ctx, w.dep)
	if err != nil {
		return w.text
	}
	name := dep.ID
	if dep.Short != "" {
		name = dep.Short
	}
	s := fmt.Sprintf("waiting for %s (%s", name, dep.State)
	if p := e.Progress(dep.ID); p != nil && p.Percentage > 0 {
		s += fmt.Sprintf(", %.0f%%", p.Percentage)
	}
	return s + ")"
}

// cancelQueued ends a queued run the scheduler took out of the queue
// (its dependency failed, its sweep stopped).
func (e *Engine) cancelQueued(id, why string) {
	ctx := context.WithoutCancel(e.ctx)
	now := e.cfg.Now()
	removeSecrets(e.runDir(id))
	e.removeSnapshot(id) // it never ran: nothing to copy back
	f := fallbackFailure(cancelledInput)
	f.Message = why // the failure's message; the reason is "CANCELLED: " and it, as any end's
	if _, err := e.cfg.Store.Transition(ctx, id, store.Cancelled, describeEnd(store.Cancelled, sandbox.Exit{}, f), func(r *store.Run) {
		r.EndedAt = &now
		r.Exit = &sandbox.Exit{Cancelled: true, Code: 130, EndedAt: now}
		r.Failure = f
	}); err != nil {
		e.log.Error("campaign: cancel", "run", id, "err", err)
	}
	e.finish(id)
}

// recordDevices stores the GPUs a run was handed, so a restarted daemon
// knows they are taken.
func (e *Engine) recordDevices(id string, devs []string) {
	if _, err := e.cfg.Store.UpdateRun(context.WithoutCancel(e.ctx), id, func(r *store.Run) error {
		if r.Campaign == nil {
			r.Campaign = &store.Campaign{}
		}
		r.Campaign.Devices = devs
		return nil
	}); err != nil {
		e.log.Error("campaign: record GPUs", "run", id, "err", err)
	}
}
