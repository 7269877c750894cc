// Package proc reads what the kernel knows about processes, for both
// sides of a process run: a process's start time (so a recycled pid is
// never mistaken for it), its RSS and CPU time, the tree below it, and
// its exit. On Linux it reads /proc directly; elsewhere it asks gopsutil.
package proc

import (
	"context"

	"github.com/runbox/runbox/sandbox"
)

// Sample sums RSS and CPU time over pids. Processes that exit meanwhile
// are skipped.
func Sample(ctx context.Context, pids []int) sandbox.Stats {
	var st sandbox.Stats
	for _, pid := range pids {
		if ctx.Err() != nil {
			break
		}
		rss, cpu, ok := Usage(pid)
		if !ok {
			continue
		}
		st.Pids++
		st.RSSBytes += rss
		st.CPUSeconds += cpu
		if r, w, ok := IOBytes(pid); ok { // io_linux.go
			st.ReadBytes += r
			st.WriteBytes += w
		}
	}
	return st
}
