package host

import (
	"context"
	"sync"
	"time"

	"github.com/runbox/runbox/sandbox"
)

// probeTTL is how long a Docker health or image probe answers --sandbox
// auto. Probing costs tens of milliseconds per run, and what it tells
// changes rarely; a failed start is reported as SANDBOX_ERROR anyway.
const probeTTL = 3 * time.Second

// probes caches a backend's health and image presence for probeTTL.
type probes struct {
	mu     sync.Mutex
	health map[string]probe[sandbox.Health]
	images map[string]probe[bool]
}

type probe[T any] struct {
	at time.Time
	v  T
}

func (p *probes) healthOf(ctx context.Context, sb sandbox.Sandbox) sandbox.Health {
	p.mu.Lock()
	if p.health == nil {
		p.health = map[string]probe[sandbox.Health]{}
	}
	c, ok := p.health[sb.Name()]
	p.mu.Unlock()
	if ok && time.Since(c.at) < probeTTL {
		return c.v
	}
	h := sb.Health(ctx)
	p.mu.Lock()
	p.health[sb.Name()] = probe[sandbox.Health]{time.Now(), h}
	p.mu.Unlock()
	return h
}

func (p *probes) hasImage(ctx context.Context, ic imageChecker, ref string) bool {
	p.mu.Lock()
	if p.images == nil {
		p.images = map[string]probe[bool]{}
	}
	c, ok := p.images[ref]
	p.mu.Unlock()
	if ok && time.Since(c.at) < probeTTL {
		return c.v
	}
	v := ic.HasImage(ctx, ref)
	p.mu.Lock()
	p.images[ref] = probe[bool]{time.Now(), v}
	p.mu.Unlock()
	return v
}

// imageChecker is implemented by backends that can tell whether an image
// is present locally (the Docker backend).
type imageChecker interface {
	HasImage(ctx context.Context, ref string) bool
}
