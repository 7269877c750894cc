package host

import (
	"context"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// probeTTL is how long a backend's health, or its answer to --sandbox
// auto for an image, stands. Probing costs tens of milliseconds per run, and what it tells
// changes rarely; a failed start is reported as SANDBOX_ERROR anyway.
const probeTTL = 3 * time.Second

// probes caches a backend's health and image presence for probeTTL.
type probes struct {
	mu     sync.Mutex
	health map[string]probe[sandbox.Health]
	auto   map[string]probe[autoAnswer]
	caps   map[string]probe[sandbox.Capabilities]
}

type probe[T any] struct {
	at time.Time
	v  T
}

func (p *probes) healthOf(ctx context.Context, sb sandbox.Sandbox) sandbox.Health {
	return cached(p, &p.health, sb.Name(), func() sandbox.Health { return sb.Health(ctx) })
}

// autoAnswer is a backend's answer to --sandbox auto for one image.
type autoAnswer struct {
	ok     bool
	reason string
}

func (p *probes) takesAuto(ctx context.Context, c sandbox.AutoCandidate, name, image string) (bool, string) {
	a := cached(p, &p.auto, name+"\x00"+image, func() autoAnswer {
		ok, reason := c.TakesAuto(ctx, image)
		return autoAnswer{ok, reason}
	})
	return a.ok, a.reason
}

// capsOf is a backend's capabilities: they are probed (confinement,
// cgroups) and change as rarely as its health.
func (p *probes) capsOf(ctx context.Context, sb sandbox.Sandbox) sandbox.Capabilities {
	return cached(p, &p.caps, sb.Name(), func() sandbox.Capabilities { return sb.Capabilities(ctx) })
}

// cached answers key from m while its answer is younger than probeTTL,
// else asks get (outside the lock: a probe may take a while).
func cached[T any](p *probes, m *map[string]probe[T], key string, get func() T) T {
	p.mu.Lock()
	if *m == nil {
		*m = map[string]probe[T]{}
	}
	c, ok := (*m)[key]
	p.mu.Unlock()
	if ok && time.Since(c.at) < probeTTL {
		return c.v
	}
	v := get()
	p.mu.Lock()
	(*m)[key] = probe[T]{time.Now(), v}
	p.mu.Unlock()
	return v
}
