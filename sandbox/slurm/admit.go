package slurm

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sandbox"
)

// Capabilities: a job runs on the cluster's nodes, which runbox does not
// confine (no --isolate level, no allow-list), on their own network (no
// --network mode); Slurm enforces memory (--mem) and CPUs, hands out the
// cluster's GPUs, and takes scheduler settings.
func (s *Sandbox) Capabilities(ctx context.Context) sandbox.Capabilities {
	return sandbox.Capabilities{
		Limits:           map[string]string{"memory": "Slurm (--mem)", "cpus": "Slurm (--cpus-per-task)", "pids": "as the cluster sets"},
		SchedulerOptions: true,
		GPUs:             sandbox.GPUsCluster,
		Cluster:          "Slurm",
	}
}

// Admit refuses a level of isolation, a --network mode and an allow-list
// (promises nobody would keep on the nodes), a --pids (sbatch sets none),
// a --gpus the cluster cannot take as given
// (how many GPUs it has is the cluster's to decide, when the job is
// scheduled) and a negative queue timeout, and puts the scheduler
// settings in the spec. While planning it says why the planner's hosts
// are not an allow-list here.
func (s *Sandbox) Admit(ctx context.Context, req sandbox.Request, spec *sandbox.Spec) (sandbox.Verdict, error) {
	if l := req.Isolate; l != "" && l != sandbox.IsolateNone {
		return sandbox.Verdict{}, sandbox.Refuse("--isolate %s confines process runs; a %s job runs on the cluster's nodes, which runbox does not confine: drop --isolate, or run it with --sandbox process or docker", l, sandbox.Slurm)
	}
	if req.Network != "" {
		return sandbox.Verdict{}, sandbox.Refuse("--network %s sets a container's or a confined process run's network; a Slurm job gets the cluster's network: drop --network, or run it with --sandbox process or docker", req.Network)
	}
	if len(req.AllowNet) > 0 || len(req.SetupAllowNet) > 0 {
		return sandbox.Verdict{}, sandbox.Refuse("--allow-net keeps a run to named hosts through a proxy on the machine that runs it; a Slurm job runs on the cluster's nodes, where runbox has no proxy: drop --allow-net (the cluster's own network policy applies), or run it with --sandbox process or docker")
	}
	var v sandbox.Verdict
	var notes []string
	if n := spec.Limits.Pids; n > 0 {
		// sbatch sets no process count: the cluster's own limits apply.
		if !req.Planning {
			return sandbox.Verdict{}, sandbox.Refuse("--pids %d: a Slurm job's process count is the cluster's to limit (sbatch has no such setting): drop --pids", n)
		}
		notes = append(notes, fmt.Sprintf("pids: the cluster's (--pids %d is not taken on Slurm)", n))
		spec.Limits.Pids = 0
	}
	if req.Planning {
		if hosts := req.ProposedAllowNet; len(hosts) > 0 {
			notes = append(notes, "network: the command needs "+strings.Join(hosts, ", ")+" (an allow-list applies to process runs; a Slurm job gets the cluster's network)")
		}
	} else if err := admitGPUs(req.GPUs); err != nil {
		return sandbox.Verdict{}, err
	}
	v.Note = strings.Join(notes, "; ")
	r := req.Slurm
	if r == nil {
		return v, nil
	}
	if r.QueueTimeout < 0 {
		return sandbox.Verdict{}, sandbox.Refuse("queue timeout %s: cannot be negative", r.QueueTimeout)
	}
	o := *r
	spec.Slurm = &o
	return v, nil
}

// admitGPUs refuses a --gpus that means nothing on a cluster: all of
// them, or this host's devices by name. A count goes to the cluster,
// which decides whether it can ever be met.
func admitGPUs(g string) error {
	switch {
	case g == "":
	case g == "all":
		return sandbox.Refuse("--gpus all has no meaning on a cluster: ask for a number (--gpus 2)")
	case strings.HasPrefix(g, "device="):
		return sandbox.Refuse("--gpus %s names this host's devices; on Slurm ask for a number or use --slurm-opt gres=gpu:TYPE:N", g)
	default:
		if _, err := strconv.Atoi(g); err != nil {
			return sandbox.Refuse("--gpus %q: want a number of GPUs", g)
		}
	}
	return nil
}
