package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process/supervisor"
)

// The warm pool.
//
// Starting a container is most of what a short run costs (runc sets up
// namespaces, cgroups and mounts: about 0.3 s here), so the pool keeps
// containers that are created and started ahead, their init waiting on
// the box's FIFO (supervisor.AwaitArg) for a run. A run whose container
// would be identical (image, limits, user, network, workspace: the
// key is the whole container config) takes one, has its spec and log put
// into its box, and releases its init; a new one is made in the
// background. A container serves one run and is removed after it, like
// any other: never reused. A kind of run that has not been seen for
// Options.PoolIdle has its warm containers removed, and Close removes
// them all, so an idle daemon (which exits) leaves none; a daemon killed
// with -9 leaves them to the next one's Sweep (they carry LabelManaged
// and LabelHome, and LabelPoolBox instead of a run id), and their inits
// give up on their own after three times PoolIdle.

// runIDFile in a pooled box names the run it was handed (for Sweep).
const runIDFile = "run-id"

// readyWait bounds how long a new warm container's init may take to wait
// on its FIFO.
const readyWait = 20 * time.Second

type pool struct {
	s      *Sandbox
	mu     sync.Mutex
	kinds  map[string]*kind
	closed bool
	fills  sync.WaitGroup // refills under way, which close waits for
}

// kind is the warm containers of one container config.
type kind struct {
	key     string
	config  container.Config
	host    container.HostConfig
	user    string
	ready   []warm
	filling int
	idle    *time.Timer
	gone    bool // drained: its containers are removed, not kept
}

type warm struct{ id, box string }

func newPool(s *Sandbox) *pool { return &pool{s: s, kinds: map[string]*kind{}} }

func (pl *pool) enabled() bool { return pl.s.opts.PoolSize > 0 && pl.s.opts.PoolDir != "" }

// poolable says whether a run can take a warm container: everything it
// needs mounted must be known before it exists. GPU runs never do: a warm
// container would hold its devices for nothing, and such runs are long.
func poolable(spec sandbox.Spec) bool {
	return len(spec.Assets) == 0 && spec.StdinFile == "" && spec.GPUs == ""
}

// claim hands the run to a warm container of its kind, if one is ready,
// and asks for another either way. nil means the run needs a fresh one.
func (pl *pool) claim(ctx context.Context, spec sandbox.Spec, p *plan, st *state) *handle {
	if !pl.enabled() || !poolable(spec) {
		return nil
	}
	cfg := *p.config
	cfg.Labels = map[string]string{LabelManaged: "true", LabelHome: pl.s.opts.Home}
	// A warm container outlives its pool's use of it by this at most (a
	// daemon killed while making one leaves it to no sweep): its init then
	// exits, and Docker removes it.
	cfg.Cmd = []string{supervisor.Arg, supervisor.AwaitArg, BoxMount, (3 * pl.s.opts.PoolIdle).String()}
	b, err := json.Marshal(struct {
		C container.Config
		H *container.HostConfig
	}{cfg, p.host})
	if err != nil {
		return nil
	}
	key := string(b)
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil
	}
	k := pl.kinds[key]
	if k == nil {
		k = &kind{key: key, config: cfg, host: *p.host, user: p.user}
		k.host.Mounts = slices.Clone(p.host.Mounts)
		pl.kinds[key] = k
	}
	if k.idle != nil {
		k.idle.Stop()
	}
	k.idle = time.AfterFunc(pl.s.opts.PoolIdle, func() { pl.drain(k) })
	var w *warm
	if n := len(k.ready); n > 0 {
		w = &k.ready[0]
		k.ready = slices.Delete(slices.Clone(k.ready), 0, 1)
	}
	pl.fills.Add(1)
	pl.mu.Unlock()
	go func() {
		defer pl.fills.Done()
		pl.refill(k)
	}()
	if w == nil {
		return nil
	}
	cli, err := pl.s.Client()
	if err != nil {
		return nil
	}
	discard := func() *handle {
		pl.remove(*w)
		return nil
	}
	// The box gets the run; a failure here leaves the run to a fresh
	// container, and this one (maybe half given) is removed.
	if err := fillBox(w.box, spec.LogPath, p.user, p.inner, nil); err != nil {
		return discard()
	}
	if err := os.WriteFile(filepath.Join(w.box, runIDFile), []byte(spec.RunID+"\n"), 0o600); err != nil {
		return discard()
	}
	if err := st.update(func(r *runState) { *r = runState{ContainerID: w.id, Box: w.box, Pooled: true} }); err != nil {
		return discard()
	}
	if err := supervisor.Release(w.box); err != nil {
		st.update(func(r *runState) { *r = runState{} })
		return discard()
	}
	h := pl.s.newHandle(cli, w.id, spec, st, w.box, k.host.AutoRemove)
	go h.run()
	go h.watchRecord()
	return h
}

// refill makes warm containers until k has PoolSize of them (ready or
// being made).
func (pl *pool) refill(k *kind) {
	for {
		pl.mu.Lock()
		if pl.closed || k.gone || len(k.ready)+k.filling >= pl.s.opts.PoolSize {
			pl.mu.Unlock()
			return
		}
		k.filling++
		pl.mu.Unlock()
		w, err := pl.make(k)
		pl.mu.Lock()
		k.filling--
		keep := err == nil && !pl.closed && !k.gone
		if keep {
			k.ready = append(k.ready, w)
		}
		pl.mu.Unlock()
		if err != nil {
			return // tried again at the next claim
		}
		if !keep {
			pl.remove(w)
			return
		}
	}
}

// make creates and starts one warm container of kind k and waits until
// its init waits for a run.
func (pl *pool) make(k *kind) (warm, error) {
	ctx, cancel := context.WithTimeout(context.Background(), readyWait+30*time.Second)
	defer cancel()
	cli, err := pl.s.Client()
	if err != nil {
		return warm{}, err
	}
	var rnd [8]byte
	rand.Read(rnd[:])
	name := "runbox-warm-" + hex.EncodeToString(rnd[:])
	box := filepath.Join(pl.s.opts.PoolDir, name)
	if err := makeBox(box, k.user); err != nil {
		return warm{}, err
	}
	_, fmode := boxModes(k.user)
	if err := supervisor.MakeCtl(box, uint32(fmode)); err != nil {
		os.RemoveAll(box)
		return warm{}, err
	}
	cfg := k.config
	cfg.Labels = maps.Clone(k.config.Labels)
	cfg.Labels[LabelPoolBox] = box
	hc := k.host
	hc.Mounts = append(slices.Clone(k.host.Mounts), mount.Mount{Type: mount.TypeBind, Source: box, Target: BoxMount})
	created, err := cli.ContainerCreate(ctx, &cfg, &hc, nil, nil, name)
	if err != nil {
		os.RemoveAll(box)
		return warm{}, err
	}
	w := warm{id: created.ID, box: box}
	pl.s.live.add(w.id)
	fail := func(err error) (warm, error) {
		pl.remove(w)
		return warm{}, err
	}
	if err := cli.ContainerStart(ctx, w.id, container.StartOptions{}); err != nil {
		return fail(err)
	}
	for deadline := time.Now().Add(readyWait); !supervisor.Waiting(box); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fail(supervisor.ErrNotWaiting)
		}
	}
	return w, nil
}

// remove removes a warm container that never got (or never started) a run.
func (pl *pool) remove(w warm) {
	if cli, err := pl.s.Client(); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cli.ContainerRemove(ctx, w.id, container.RemoveOptions{Force: true})
		cancel()
	}
	pl.s.live.remove(w.id)
	os.RemoveAll(w.box)
}

// drain removes k's warm containers: no run of its kind came for PoolIdle.
func (pl *pool) drain(k *kind) {
	pl.mu.Lock()
	ws := k.ready
	k.ready, k.gone = nil, true
	if pl.kinds[k.key] == k {
		delete(pl.kinds, k.key)
	}
	pl.mu.Unlock()
	for _, w := range ws {
		pl.remove(w)
	}
}

// close removes every warm container and makes no more.
func (pl *pool) close() {
	pl.mu.Lock()
	pl.closed = true
	ks := slices.Collect(maps.Values(pl.kinds))
	pl.mu.Unlock()
	var wg sync.WaitGroup
	for _, k := range ks {
		if k.idle != nil {
			k.idle.Stop()
		}
		wg.Go(func() { pl.drain(k) })
	}
	wg.Wait()
	pl.fills.Wait() // each removes what it made once it sees closed
}
