package proc

import (
	"os"
	"time"
)

// pollExit is WatchExit by polling the start time every interval: the
// fallback on Linux, the way elsewhere.
func pollExit(pid int, start uint64, every time.Duration) (<-chan struct{}, error) {
	if st, err := StartTime(pid); err != nil || st != start {
		return nil, os.ErrNotExist
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(every)
		defer t.Stop()
		for range t.C {
			if st, err := StartTime(pid); err != nil || st != start {
				return
			}
		}
	}()
	return done, nil
}
