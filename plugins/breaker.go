package plugins

import (
	"errors"
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
	offReason   string // the failure that switched it off
	wasOff      bool   // switched off since the last success
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

// ok records a successful call and reports whether it ended a switch-off
// (the half-open call succeeded).
func (b *breaker) ok() (closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	b.consecutive = 0
	closed, b.wasOff = b.wasOff, false
	return closed
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
		b.offReason = err.Error()
		b.wasOff = true
		return true
	}
	return false
}

// restore switches the plugin off until until, as another process (or an
// earlier host of this one) recorded it.
func (b *breaker) restore(o offRecord, threshold int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.openUntil, b.offReason, b.wasOff = o.Until, o.Reason, true
	b.consecutive = max(o.Failures, threshold)
	b.lastErr = errors.New(o.Reason)
}

// breakerState is what Plugins shows of a breaker.
type breakerState struct {
	off             bool
	offReason       string
	retryAt         time.Time
	calls, failures uint64
	consecutive     int
	lastErr         error
}

// snapshot returns the breaker's state for Plugins.
func (b *breaker) snapshot() breakerState {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := breakerState{calls: b.calls, failures: b.failures, consecutive: b.consecutive, lastErr: b.lastErr}
	if !b.openUntil.IsZero() && time.Now().Before(b.openUntil) {
		s.off, s.offReason, s.retryAt = true, b.offReason, b.openUntil
	}
	return s
}
