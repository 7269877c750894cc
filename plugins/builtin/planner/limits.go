package planner

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/runbox/runbox/sdk"
)

// Default timeouts when there is no history.
const (
	timeoutQuick    = 30 * minute
	timeoutSmokeCmd = 10 * minute
	timeoutTraining = 4 * hour
	minTimeout      = 5 * minute
)

func (a *analysis) exp() sdk.Experience {
	if a.in.Experience == nil {
		return sdk.Experience{}
	}
	return *a.in.Experience
}

// failures counts past failures with code, the last failure included.
func (a *analysis) failures(code string) int {
	e := a.exp()
	n := e.FailureCodes[code]
	if n == 0 && e.LastFailure != nil && e.LastFailure.Code == code {
		n = 1
	}
	return n
}

func (a *analysis) chooseTimeout(r *sdk.Recommendation) {
	e := a.exp()
	timeouts := a.failures(sdk.CodeTimeout)
	if e.MedianDurationSeconds > 0 && e.Succeeded > 0 {
		margin := 2.0
		if timeouts > 0 {
			margin = 3.0
		}
		t := roundUp(int(e.MedianDurationSeconds*margin+0.5), minute)
		t = max(t, minTimeout)
		r.TimeoutSeconds = t
		r.TimeoutReason = strconv.FormatFloat(margin, 'f', 0, 64) + "× the median duration (" + dur(e.MedianDurationSeconds) +
			") of " + plural(e.Succeeded, "successful past run")
		if timeouts > 0 {
			r.TimeoutReason += ", with extra margin after " + plural(timeouts, "timeout")
		}
		return
	}
	switch {
	case a.commandIsSmoke():
		r.TimeoutSeconds, r.TimeoutReason = timeoutSmokeCmd, "the command is itself a smoke/dry run, which should finish in minutes"
	case len(a.training) > 0:
		r.TimeoutSeconds, r.TimeoutReason = timeoutTraining, "no history; training detected ("+a.training[0]+"), which usually runs for hours"
	default:
		r.TimeoutSeconds, r.TimeoutReason = timeoutQuick, "no history and no training loop detected: a 30 minute default for scripts and data jobs"
	}
	if timeouts > 0 {
		r.TimeoutSeconds *= 2
		r.TimeoutReason += "; doubled after " + plural(timeouts, "past timeout")
	}
}

// commandIsSmoke reports whether the command already passes a smoke switch.
func (a *analysis) commandIsSmoke() bool {
	for _, w := range a.in.Command {
		switch normalize(strings.SplitN(w, "=", 2)[0]) {
		case "smoke", "smoketest", "dryrun", "fastdevrun", "sanitycheck":
			return strings.HasPrefix(w, "-")
		}
	}
	return false
}

func (a *analysis) chooseMemory(r *sdk.Recommendation) {
	e := a.exp()
	host := a.in.Host.MemoryBytes
	ooms := a.failures(sdk.CodeOOMKilled)
	limit := uint64(0)
	if host > 0 {
		limit = host / 10 * 9
	}
	var want uint64
	switch {
	case e.MaxPeakRSSBytes > 0:
		f, why := 1.5, "1.5×"
		switch {
		case ooms >= 2:
			f, why = 2.5, "2.5× (after "+plural(ooms, "OOM kill")+")"
		case ooms == 1:
			f, why = 2.0, "2× (after an OOM kill)"
		}
		want = uint64(float64(e.MaxPeakRSSBytes) * f)
		r.MemoryReason = why + " the largest peak RSS of past runs (" + bytesStr(e.MaxPeakRSSBytes) + ")"
	case host == 0:
		return
	case ooms > 0:
		want = limit
		r.MemoryReason = "past runs were OOM-killed and no peak is known: 90% of host memory (" + bytesStr(host) + ")"
	case len(a.training) > 0 || a.cudaFramework() != "" || a.has("mlx"):
		want = host / 4 * 3
		r.MemoryReason = "no history; ML job: 75% of host memory (" + bytesStr(host) + "), leaving the rest to the system"
	default:
		want = host / 2
		r.MemoryReason = "no history: half of host memory (" + bytesStr(host) + ")"
	}
	want = uint64(roundUp(int(want/mib), 256)) * mib
	if limit > 0 && want > limit {
		want = limit
		r.MemoryReason += ", capped at 90% of host memory (" + bytesStr(host) + ")"
		if ooms > 0 {
			a.note("the job may need more memory than this host has: reduce the batch size or the data held in memory")
		}
	}
	r.MemoryBytes = int64(want)
}

func (a *analysis) chooseNetwork(r *sdk.Recommendation) {
	netFail := a.failures(sdk.CodeNetworkError) > 0
	switch {
	case a.maxRisk() <= severityRank[sdk.SeverityHigh]:
		r.Network = "none"
		r.NetworkReason = "high-risk findings (" + a.riskCodes(1) + "): the network stays off until someone has reviewed the command"
		if len(a.network) > 0 {
			r.NetworkReason += ", even though it uses it (" + a.network[0] + ")"
		}
	case len(a.network) > 0:
		r.Network = "bridge"
		r.NetworkReason = "network use detected: " + a.network[0]
		if n := countDistinct(a.network); n > 1 {
			r.NetworkReason += " (and " + plural(n-1, "more place") + ")"
		}
		a.addRisk(sdk.SeverityInfo, riskNetwork, "uses the network (downloads, hub loads, API calls or package installs)", a.network[0])
	case netFail:
		r.Network, r.NetworkReason = "bridge", "no network use seen in the script, but the last run failed with NETWORK_ERROR"
	default:
		r.Network, r.NetworkReason = "none", "no network use detected (no HTTP clients, downloads, hub loads or package installs)"
		if a.in.ScriptText == "" && a.in.ScriptPath != "" {
			r.NetworkReason = "no network use detected in the command (the script text was not provided)"
		}
	}
}

func (a *analysis) chooseGPUs(r *sdk.Recommendation, hi hostInfo) {
	f := a.cudaName()
	wants := a.cudaFramework() != "" || len(a.cuda) > 0
	switch {
	case a.has("mlx") && hi.apple:
		a.note("MLX uses the Apple GPU through Metal in the host process; no GPU setting is needed")
	case wants && hi.nvidia > 0 && r.Sandbox == "docker" && !hi.nvidiaRuntime:
		a.note("the host has " + plural(hi.nvidia, "NVIDIA GPU") + " but Docker has no nvidia runtime, so this container runs on CPU")
	case wants && hi.nvidia > 0:
		name := ""
		if hi.gpuName != "" {
			name = " (" + hi.gpuName + ")"
		}
		r.GPUs = "all"
		r.GPUsReason = f + " is used and the host has " + plural(hi.nvidia, "NVIDIA GPU") + name
	case wants && hi.apple && len(a.metal) > 0:
		a.note("the script uses Apple MPS; it gets the GPU only as a host process")
	case a.cudaFramework() != "" && a.in.Host.OS != "" && len(a.cuda) == 0:
		a.note(f + " is imported but the host has no NVIDIA GPU: it will run on the CPU")
	}
}

// experienceNotes turns past failures into advice for this run.
func (a *analysis) experienceNotes() {
	e := a.exp()
	if e.Runs > 0 {
		n := strconv.Itoa(e.Runs) + " similar past runs: " + strconv.Itoa(e.Succeeded) + " succeeded, " + strconv.Itoa(e.Failed) + " failed"
		if len(e.FailureCodes) > 0 {
			codes := make([]string, 0, len(e.FailureCodes))
			for c, k := range e.FailureCodes {
				codes = append(codes, c+"×"+strconv.Itoa(k))
			}
			sort.Strings(codes)
			n += " (" + strings.Join(codes, ", ") + ")"
		}
		a.note(n)
	}
	lf := e.LastFailure
	if lf == nil {
		return
	}
	switch lf.Code {
	case sdk.CodeCUDAOOM, sdk.CodeMetalOOM:
		a.note("the last run failed with " + lf.Code + ": use a smaller batch" + a.batchHint() +
			", gradient accumulation, mixed precision or gradient checkpointing")
	case sdk.CodeOOMKilled:
		a.note("the last run was killed for memory (OOM_KILLED): the memory recommendation is raised; also consider loading less data at once")
	case sdk.CodeTimeout, sdk.CodeStalled:
		a.note("the last run ended with " + lf.Code + ": the timeout has extra margin; check for a hang or cut the work with a smoke run first")
	case sdk.CodeModuleNotFound:
		m := lf.Details["module"]
		if m == "" {
			m = "a module"
		}
		a.note("the last run could not import " + m + ": install it in the image or environment before running")
	case sdk.CodeNetworkError:
		a.note("the last run failed with NETWORK_ERROR: network access is recommended")
	default:
		msg := "the last run failed with " + lf.Code
		if lf.Message != "" {
			msg += ": " + clip(lf.Message, 120)
		}
		a.note(msg)
	}
}

// batchHint names the script's batch-size option, if it has one.
func (a *analysis) batchHint() string {
	for _, o := range a.options {
		if k := normalize(o.display()); strings.Contains(k, "batchsize") || k == "bs" || k == "batch" {
			return " (" + o.display() + ", line " + strconv.Itoa(o.line) + ")"
		}
	}
	return ""
}

func roundUp(n, to int) int {
	if n <= 0 {
		return to
	}
	return (n + to - 1) / to * to
}

func dur(sec float64) string {
	return time.Duration(sec * float64(time.Second)).Round(time.Second).String()
}

func bytesStr(b uint64) string {
	switch {
	case b >= gib:
		return strconv.FormatFloat(float64(b)/gib, 'f', 1, 64) + " GiB"
	default:
		return strconv.FormatUint(b/mib, 10) + " MiB"
	}
}

func countDistinct(xs []string) int {
	seen := map[string]bool{}
	for _, x := range xs {
		seen[x] = true
	}
	return len(seen)
}
