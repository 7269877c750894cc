package host

import (
	"maps"
	"strings"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/store"
)

// Slurm-to-Slurm chains: a Slurm run that comes after Slurm runs already
// in the cluster is submitted at once with sbatch --dependency, so the
// cluster holds it and starts it the moment they end (no round trip
// through the daemon, which may be down by then). If one of them fails,
// the daemon cancels it (scancel) with the reason naming that run: Slurm
// itself would leave it pending forever (DependencyNeverSatisfied)
// unless the cluster sets kill_invalid_depend.

// slurmChainLocked returns the --dependency value for queued run id, or
// "" when it must wait in the daemon: it is not a Slurm run, or a run it
// comes after is not a Slurm job yet. Called with e.mu held.
func (e *Engine) slurmChainLocked(id string, c *store.Campaign) string {
	p := e.pending[id]
	if p == nil || p.backend != sandbox.Slurm {
		return ""
	}
	var jobs []string
	for _, dep := range c.After {
		if st, ended := e.camp.ended[dep]; ended {
			if st == store.Succeeded || c.AfterAny {
				continue
			}
			return "" // depStateLocked cancels it
		}
		if _, live := e.active[dep]; !live {
			return "" // still queued in the daemon
		}
		run, err := e.cfg.Store.GetRun(e.ctx, dep)
		if err != nil || run.Sandbox != sandbox.Slurm || !strings.HasPrefix(run.Ref, "slurm:") {
			return ""
		}
		jobs = append(jobs, strings.TrimPrefix(run.Ref, "slurm:"))
	}
	if len(jobs) == 0 {
		return ""
	}
	kind := "afterok:"
	if c.AfterAny {
		kind = "afterany:"
	}
	return kind + strings.Join(jobs, ":")
}

// withDependency adds --dependency to a Slurm spec (a copy of its
// options: the stored spec is not changed).
func withDependency(spec *sandbox.Spec, dep string) {
	sl := sandbox.SlurmSpec{}
	if spec.Slurm != nil {
		sl = *spec.Slurm
	}
	sl.Options = maps.Clone(sl.Options)
	if sl.Options == nil {
		sl.Options = map[string]string{}
	}
	sl.Options["dependency"] = dep
	spec.Slurm = &sl
}

// heldBySlurmLocked lists the started Slurm runs that Slurm holds for
// run id, which ended in state: they can never start unless it
// succeeded (or they start after it whatever happens).
func (e *Engine) heldBySlurmLocked(id string, state store.State) []*runner {
	if !state.Terminal() || state == store.Succeeded {
		return nil
	}
	var out []*runner
	for rid, r := range e.active {
		c := e.camp.info[rid]
		if c == nil || c.AfterAny {
			continue
		}
		for _, dep := range c.After {
			if dep == id {
				out = append(out, r)
				break
			}
		}
	}
	return out
}
