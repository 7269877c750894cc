package plugins

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/plugins/builtin/progress"
)

func TestZZProbe(t *testing.T) {
	mix := progress.SyntheticMix(10000)
	n := 0
	hits := map[string]int{}
	for _, l := range mix {
		ok := false
		for _, lit := range progress.Manifest.Prefilter {
			if strings.Contains(l, lit) {
				if !ok {
					hits[lit]++
				}
				ok = true
			}
		}
		if ok {
			n++
		}
	}
	t.Logf("pass %d/10000 hits=%v", n, hits)
	tot := 0
	for _, l := range mix { tot += len(l) }
	t.Logf("avg len %d", tot/len(mix))
}
