package plugins

import (
	"sync"
	"time"
)

// breaker switches a plugin off after threshold consecutive failures, for
// cooldown; then one call is let through to try it again (half-open).
type breaker struct {
	mu          sync.Mutex
	consecutive int
	calls       uint64
	failures    uint64
	lastErr     error
	openUntil   time.Time
}

// allow reports whether a call may go ahead now.
func (b *breaker) allow(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.openUntil.IsZero() {
		return true
	}
	if now.Before(b.openUntil) {
		return false
	}
	// Half-open: let this call through; a failure re-opens at once because
	// consecutive is still at the threshold.
	b.openUntil = time.Time{}
	return true
}

// ok records a successful call.
func (b *breaker) ok() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.consecutive = 0
}

// fail records a failed call and reports whether it switched the plugin off.
// threshold 0 switches off for good (a module that cannot load).
func (b *breaker) fail(err error, threshold int, cooldown time.Duration) (opened bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.failures++
	b.consecutive++
	b.lastErr = err
	if threshold == 0 {
		return false
	}
	if b.consecutive >= threshold {
		b.openUntil = time.Now().Add(cooldown)
		return true
	}
	return false
}

// snapshot returns counters for Plugins.
func (b *breaker) snapshot() (open bool, calls, failures uint64, lastErr error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return !b.openUntil.IsZero() && time.Now().Before(b.openUntil), b.calls, b.failures, b.lastErr
}
