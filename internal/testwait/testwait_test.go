package testwait

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestForRetriesUntilTheProbeHolds(t *testing.T) {
	n := 0
	err := For("the thing", 5*time.Second, func() error {
		if n++; n < 3 {
			return errors.New("not yet")
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Fatalf("err %v after %d tries, want nil after 3", err, n)
	}
}

func TestForSaysWhatItWaitedFor(t *testing.T) {
	base := errors.New("connection refused")
	n := 0
	err := For("the controller", 300*time.Millisecond, func() error { n++; return base })
	if !errors.Is(err, base) || !strings.Contains(err.Error(), "the controller") || n < 2 {
		t.Fatalf("err %v after %d tries; want the last error wrapped, the name, and more than one try", err, n)
	}
}
