package classify

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Launchers (torchrun, accelerate, deepspeed, mpirun, subprocess) report
// that a child failed. Their wrapper lines never become the answer while a
// child's own error is in the output; a child killed by a signal is.

func matchDistributed(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	if !has(lc, "exitcode", "exit status", "return code", "exited on signal", "died with", "received by pid") {
		// not a launcher report
	} else if n, ok := launcherSignal(lc); ok {
		if c, ok := sc.sigCand(n, "reported by the launcher for a child process"); ok {
			c.conf = 0.75
			if c.inferred {
				c.conf = 0.55
			}
			sc.add(i, c)
		}
		return true
	}
	if has(lc, "childfailederror", "calledprocesserror", "exitcode", "exit status", "return code", "killing subprocess") {
		// The wrapper itself (see addGeneric). A multi-process launcher's
		// report that a rank failed explains the run only when no child
		// error is visible: it enters below every text and exit reading.
		if childFailed(lc) {
			c := cand{code: sdk.CodeDistributedError, conf: 0.55, rank: 10, details: map[string]string{"kind": "child_failed"}}
			c.msg = "A distributed worker failed (" + clip(l.text, 160) + ") and its own error is not in the captured output."
			c.sugg = []string{
				"Look at the failing rank's own log; with torchrun, decorate main with @record (torch.distributed.elastic.multiprocessing.errors) to get its traceback.",
				"Rerun on a single process (python train.py) to see the error directly.",
			}
			sc.add(i, c)
			sc.cands[len(sc.cands)-1].tier = tierGeneric
		}
		return true
	}
	c := cand{code: sdk.CodeDistributedError, conf: 0.85, details: map[string]string{}}
	switch {
	case has(lc, "watchdog caught collective operation timeout", "collective operation timeout", "timed out in call to", "nccl timeout", "some nccl operations have failed or timed out"):
		c.details["kind"] = "collective_timeout"
		if op := fieldAfter(l.text, lc, "optype="); op != "" {
			c.details["op"] = op
		}
		if ms, ok := intAfter(lc, "timeout(ms)="); ok {
			c.details["timeout_ms"] = strconv.Itoa(ms)
		}
		c.msg = "A collective operation (" + orDefault(c.details["op"], "NCCL") + ") timed out: one rank stopped taking part — it crashed, hung, or took a different code path."
		c.sugg = []string{
			"Look in the other ranks' output for the first real error (an OOM or exception on one rank makes the others time out).",
			"Make every rank run the same collectives in the same order (no rank-dependent branches around all_reduce/barrier, equal number of batches per rank).",
			"If rank 0 does slow work (evaluation, checkpointing) while others wait, raise the timeout: init_process_group(timeout=timedelta(minutes=60)).",
			"Set NCCL_DEBUG=INFO and TORCH_DISTRIBUTED_DEBUG=DETAIL to see where it stops.",
		}
	case has(lc, "expected to have finished reduction in the prior iteration", "parameters that were not used in producing loss", "did not receive grad for rank"):
		c.details["kind"] = "ddp_unused_parameters"
		c.msg = "DistributedDataParallel found parameters that received no gradient in the last iteration."
		c.sugg = []string{"Pass find_unused_parameters=True to DistributedDataParallel, or make sure every parameter takes part in the loss; TORCH_DISTRIBUTED_DEBUG=DETAIL names them."}
	case has(lc, "detected mismatch between collectives", "duplicate gpu detected", "default process group has not been initialized", "invalid usage", "ncclinvalidusage"):
		c.details["kind"] = "usage"
		c.msg = "The distributed setup is wrong: " + clip(l.text, 200)
		c.sugg = []string{"Give each rank its own GPU (torch.cuda.set_device(local_rank)), call init_process_group before any collective, and launch with torchrun/accelerate so RANK/WORLD_SIZE/LOCAL_RANK are set."}
	case has(lc, "address already in use"):
		if !has(lc, "c10d", "tcpstore", "master_port", "distributed", "socket has failed to listen", "rendezvous") {
			return false
		}
		c.details["kind"] = "port_in_use"
		c.retry = true
		c.msg = "The rendezvous port is already in use (another training job, or a previous run that is still alive)."
		c.sugg = []string{"Use another port (MASTER_PORT=29501, torchrun --master_port / --rdzv-endpoint), or stop the leftover process holding it."}
	case has(lc, "nccl error", "ncclinternalerror", "ncclunhandledcudaerror", "distbackenderror", "nccl communicator was aborted", "nccl warn", "ncclcommabort", "processgroupnccl", "ncclsystemerror", "unhandled system error") && has(lc, "error", "warn", "abort", "fail"):
		c.details["kind"] = "nccl"
		c.msg = "NCCL failed: " + clip(l.text, 200)
		c.sugg = []string{
			"Rerun with NCCL_DEBUG=INFO to see the failing call; \"unhandled cuda error\" usually hides an OOM or a bad device index on one rank.",
			"In Docker, NCCL needs shared memory: `--ipc=host` or `--shm-size=16g`; NCCL_P2P_DISABLE=1 helps on some PCIe boxes.",
			"Make sure every rank uses the same torch/NCCL version and its own GPU.",
		}
	case has(lc, "rendezvous", "c10d", "tcpstore", "distnetworkerror", "connection closed by peer", "gloo", "ncclremoteerror", "remote process exited", "socket timeout"):
		if !has(lc, "error", "fail", "timeout", "timed out", "closed", "refused", "reset", "unable", "abort") {
			return false
		}
		c.details["kind"] = "transport"
		c.retry = true
		c.msg = "Distributed workers could not reach each other: " + clip(l.text, 200)
		c.sugg = []string{
			"Check MASTER_ADDR/MASTER_PORT (or the rendezvous endpoint) are reachable from every node and the port is open in the firewall.",
			"Pick the right network interface: NCCL_SOCKET_IFNAME/GLOO_SOCKET_IFNAME=eth0 (see `ip addr`); NCCL_IB_DISABLE=1 if InfiniBand is misconfigured.",
			"If a peer crashed first, its log holds the real error.",
		}
	case has(lc, "actordiederror", "the actor died unexpectedly", "the actor is dead because", "worker unexpectedly exits"):
		// Ray: its message lists the OOM killer, `ray stop` and a
		// segfault only as possible causes.
		c.details["kind"] = "actor_died"
		c.conf = 0.7
		c.msg = "A Ray actor's worker process died: " + clip(l.text, 200)
		c.sugg = []string{
			"Look in the worker's own log (/tmp/ray/session_latest/logs/) for why it died; `ray memory` and `dmesg` show a memory kill.",
			"If it ran out of memory, give the actor more (num_cpus / memory in its options) or fewer concurrent actors.",
		}
	case strings.Contains(lc, "mpi_abort was invoked"):
		c.details["kind"] = "mpi_abort"
		c.msg = "An MPI rank called MPI_Abort: " + clip(l.text, 200)
		c.sugg = []string{"The rank that aborted printed the real error just before; look for it in that rank's output."}
	default:
		return false
	}
	sc.add(i, c)
	return true
}

// fieldAfter returns the token after marker up to ',' ')' or space.
func fieldAfter(text, lc, marker string) string {
	k := strings.Index(lc, marker)
	if k < 0 {
		return ""
	}
	rest := text[k+len(marker):]
	if e := strings.IndexAny(rest, ", )"); e >= 0 {
		rest = rest[:e]
	}
	return rest
}

// launcherSignal reads a child's death by signal from launcher reports:
// torchrun "exitcode  : -9", "Signal 9 (SIGKILL) received by PID",
// subprocess "died with <Signals.SIGKILL: 9>" or "exit status 137",
// deepspeed "exits with return code = -9", mpirun "exited on signal 9".
func launcherSignal(lc string) (int, bool) {
	if k := strings.Index(lc, "died with <signals.sig"); k >= 0 {
		name := lc[k+len("died with <signals.sig"):]
		if e := strings.IndexByte(name, ':'); e > 0 {
			if n, ok := sigNums[strings.ToUpper(name[:e])]; ok {
				return n, true
			}
		}
	}
	for _, m := range []string{"exitcode", "exit status", "return code =", "exited on signal", "signal "} {
		n, ok := intAfter(lc, m)
		if !ok {
			continue
		}
		switch {
		case m == "exited on signal" || m == "signal " && strings.Contains(lc, "received by pid"):
			return n, n > 0
		case m == "signal ":
			continue
		case n < 0 && n >= -64:
			return -n, true
		case n > 128 && n <= 128+31 && m == "exit status":
			return n - 128, true
		}
	}
	return 0, false
}

var gateDistributed = []string{"actordied", "actor died", "actor is dead", "worker unexpectedly exits", "nccl", "gloo", "c10d", "distributed", "rendezvous", "collective", "exitcode", "exit status", "return code", "exited on signal",
	"childfailed", "calledprocess", "process group", "killing subprocess", "reduction in the prior iteration", "duplicate gpu", "mpi_abort", "watchdog", "died with <signals.", "address already in use"}

// childFailed reports a multi-process launcher saying a rank exited with
// a status: torchrun's "failed (exitcode: 1) local_rank: 0", its summary
// box "exitcode : 1 (pid: 14661)", "Process failed with exitcode 1",
// DeepSpeed's "exits with return code = 1".
func childFailed(lc string) bool {
	return has(lc, "failed (exitcode:", "process failed with exitcode", "exits with return code", "killing subprocess") ||
		strings.HasPrefix(lc, "exitcode") && strings.Contains(lc, "(pid")
}
