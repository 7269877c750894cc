package sdk

// The wire types' decoders, on the decoder of jsondecode.go.

// unmarshalPlanInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalPlanInput(data string, v *PlanInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.planInput(v) }, func() { *v = PlanInput{} })
}

// unmarshalClassifyInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalClassifyInput(data string, v *ClassifyInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.classifyInput(v) }, func() { *v = ClassifyInput{} })
}

// unmarshalParseInput is json.Unmarshal([]byte(data), v) for a zero *v,
// without reflection. Strings in v may share memory with data.
func unmarshalParseInput(data string, v *ParseInput) error {
	return decodeJSON(data, func(d *jsonDec) bool { return d.parseInput(v) }, func() { *v = ParseInput{} })
}

// ---- wire types -----------------------------------------------------------------

// The JSON names of each wire type's fields, for case-folded matching
// (TestJSONFieldNames checks them against the struct tags).
var (
	planInputFields  = []string{"command", "workdir", "script_path", "script_text", "task_description", "host", "experience"}
	hostFactsFields  = []string{"os", "arch", "cpus", "memory_bytes", "disk_free_bytes", "docker_available", "docker_runtimes", "gpus"}
	gpuFields        = []string{"vendor", "name", "memory_bytes"}
	experienceFields = []string{"runs", "succeeded", "failed", "failure_codes", "median_duration_seconds",
		"max_peak_rss_bytes", "last_failure"}
	failureFields       = []string{"code", "message", "suggestions", "retryable", "evidence", "confidence", "details", "plugin", "plugin_version"}
	classifyInputFields = []string{"exit_code", "signal", "oom_killed", "oom_checked", "timed_out", "cancelled", "stalled", "smoke",
		"sandbox", "command", "limits", "stdout_tail", "stderr_tail", "sandbox_error", "progress", "peak_rss_bytes",
		"duration_seconds"}
	limitsFields     = []string{"memory_bytes", "timeout_seconds", "cpus", "pids", "stall_seconds"}
	parseInputFields = []string{"lines", "last", "state"}
	progressFields   = []string{"step", "total", "percentage", "phase", "epoch", "epoch_total", "epoch_exact", "eta_seconds", "rate",
		"rate_unit", "metrics", "message", "source"}
)

func (d *jsonDec) planInput(v *PlanInput) bool {
	return d.fields("PlanInput", func(key string) bool {
		switch f := fieldName(key, planInputFields); f {
		case "command":
			return d.strings(&v.Command, f)
		case "workdir":
			return d.string(&v.Workdir, f)
		case "script_path":
			return d.string(&v.ScriptPath, f)
		case "script_text":
			return d.string(&v.ScriptText, f)
		case "task_description":
			return d.string(&v.TaskDescription, f)
		case "host":
			return d.hostFacts(&v.Host)
		case "experience":
			return decodePtr(d, &v.Experience, d.experience)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) hostFacts(v *HostFacts) bool {
	return d.fields("host", func(key string) bool {
		switch f := fieldName(key, hostFactsFields); f {
		case "os":
			return d.string(&v.OS, f)
		case "arch":
			return d.string(&v.Arch, f)
		case "cpus":
			return d.int(&v.CPUs, f)
		case "memory_bytes":
			return d.uint64(&v.MemoryBytes, f)
		case "disk_free_bytes":
			return d.uint64(&v.DiskFreeBytes, f)
		case "docker_available":
			return d.bool(&v.DockerAvailable, f)
		case "docker_runtimes":
			return d.strings(&v.DockerRuntimes, f)
		case "gpus":
			return decodeSlice(d, &v.GPUs, f, d.gpu)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) gpu(v *GPU) bool {
	return d.fields("gpus", func(key string) bool {
		switch f := fieldName(key, gpuFields); f {
		case "vendor":
			return d.string(&v.Vendor, f)
		case "name":
			return d.string(&v.Name, f)
		case "memory_bytes":
			return d.uint64(&v.MemoryBytes, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) experience(v *Experience) bool {
	return d.fields("experience", func(key string) bool {
		switch f := fieldName(key, experienceFields); f {
		case "runs":
			return d.int(&v.Runs, f)
		case "succeeded":
			return d.int(&v.Succeeded, f)
		case "failed":
			return d.int(&v.Failed, f)
		case "failure_codes":
			return decodeMap(d, &v.FailureCodes, f, func(n *int) bool { return d.int(n, f) })
		case "median_duration_seconds":
			return d.float64(&v.MedianDurationSeconds, f)
		case "max_peak_rss_bytes":
			return d.uint64(&v.MaxPeakRSSBytes, f)
		case "last_failure":
			return decodePtr(d, &v.LastFailure, d.failure)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) failure(v *Failure) bool {
	return d.fields("failure", func(key string) bool {
		switch f := fieldName(key, failureFields); f {
		case "code":
			return d.string(&v.Code, f)
		case "message":
			return d.string(&v.Message, f)
		case "suggestions":
			return d.strings(&v.Suggestions, f)
		case "retryable":
			return d.bool(&v.Retryable, f)
		case "evidence":
			return d.strings(&v.Evidence, f)
		case "confidence":
			return d.float64(&v.Confidence, f)
		case "details":
			return decodeMap(d, &v.Details, f, func(s *string) bool { return d.string(s, f) })
		case "plugin":
			return d.string(&v.Plugin, f)
		case "plugin_version":
			return d.string(&v.PluginVersion, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) classifyInput(v *ClassifyInput) bool {
	return d.fields("ClassifyInput", func(key string) bool {
		switch f := fieldName(key, classifyInputFields); f {
		case "exit_code":
			return d.int(&v.ExitCode, f)
		case "signal":
			return d.string(&v.Signal, f)
		case "oom_killed":
			return d.bool(&v.OOMKilled, f)
		case "oom_checked":
			return d.bool(&v.OOMChecked, f)
		case "timed_out":
			return d.bool(&v.TimedOut, f)
		case "cancelled":
			return d.bool(&v.Cancelled, f)
		case "stalled":
			return d.bool(&v.Stalled, f)
		case "smoke":
			return d.bool(&v.Smoke, f)
		case "sandbox":
			return d.string(&v.Sandbox, f)
		case "command":
			return d.strings(&v.Command, f)
		case "limits":
			return d.limits(&v.Limits)
		case "stdout_tail":
			return d.string(&v.StdoutTail, f)
		case "stderr_tail":
			return d.string(&v.StderrTail, f)
		case "sandbox_error":
			return d.string(&v.SandboxError, f)
		case "progress":
			return decodePtr(d, &v.Progress, d.progress)
		case "peak_rss_bytes":
			return d.uint64(&v.PeakRSSBytes, f)
		case "duration_seconds":
			return d.float64(&v.DurationSeconds, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) limits(v *Limits) bool {
	return d.fields("limits", func(key string) bool {
		switch f := fieldName(key, limitsFields); f {
		case "memory_bytes":
			return d.int64(&v.MemoryBytes, f)
		case "timeout_seconds":
			return d.float64(&v.TimeoutSeconds, f)
		case "cpus":
			return d.float64(&v.CPUs, f)
		case "pids":
			return d.int64(&v.Pids, f)
		case "stall_seconds":
			return d.float64(&v.StallSeconds, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) parseInput(v *ParseInput) bool {
	return d.fields("ParseInput", func(key string) bool {
		switch f := fieldName(key, parseInputFields); f {
		case "lines":
			return d.strings(&v.Lines, f)
		case "last":
			return decodePtr(d, &v.Last, d.progress)
		case "state":
			return d.string(&v.State, f)
		default:
			return d.skip()
		}
	})
}

func (d *jsonDec) progress(v *Progress) bool {
	return d.fields("progress", func(key string) bool {
		switch f := fieldName(key, progressFields); f {
		case "step":
			return d.int64(&v.Step, f)
		case "total":
			return d.int64(&v.Total, f)
		case "percentage":
			return d.float64(&v.Percentage, f)
		case "phase":
			return d.string(&v.Phase, f)
		case "epoch":
			return d.int64(&v.Epoch, f)
		case "epoch_total":
			return d.int64(&v.EpochTotal, f)
		case "epoch_exact":
			return d.float64(&v.EpochExact, f)
		case "eta_seconds":
			return d.float64(&v.ETASeconds, f)
		case "rate":
			return d.float64(&v.Rate, f)
		case "rate_unit":
			return d.string(&v.RateUnit, f)
		case "metrics":
			return d.metrics(&v.Metrics, f)
		case "message":
			return d.string(&v.Message, f)
		case "source":
			return d.string(&v.Source, f)
		default:
			return d.skip()
		}
	})
}
