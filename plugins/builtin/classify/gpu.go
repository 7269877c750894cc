package classify

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// window joins line i with the next n-1 lines of the same stream, so details
// survive a message that a terminal or a paste wrapped.
func (sc *scanner) window(i, n int) (string, string) {
	if i+1 >= len(sc.lines) || n <= 1 {
		return sc.lines[i].text, sc.lines[i].lc
	}
	var b, lb strings.Builder
	b.WriteString(sc.lines[i].text)
	lb.WriteString(sc.lines[i].lc)
	for k := i + 1; k < len(sc.lines) && k < i+n; k++ {
		if sc.lines[k].key != sc.lines[i].key || sc.lines[k].text == "" || sc.roles[k] == roleFrame {
			break
		}
		b.WriteByte(' ')
		b.WriteString(sc.lines[k].text)
		lb.WriteByte(' ')
		lb.WriteString(sc.lines[k].lc)
	}
	return b.String(), lb.String()
}

func matchGPU(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	switch {
	case has(lc, "caller indicates that this is not a failure"):
		return true // TensorFlow's allocator retrying: not an error
	case has(lc, "mps backend out of memory", "kiogpucommandbuffercallbackerroroutofmemory", "maximum allowed buffer size") ||
		strings.Contains(lc, "command buffer execution failed") && has(lc, "memory") ||
		has(lc, "[metal", "mtlcommandbuffer", "metalexecutionerror") && has(lc, "out of memory", "insufficient memory"):
		sc.add(i, metalOOM(sc, i))
		return true
	case has(lc, "[metal]", "mtlcommandbuffer", "metalexecutionerror") && has(lc, "command buffer execution failed", "error domain=", "failed"):
		sc.add(i, cand{code: sdk.CodeGPUError, conf: 0.8, details: map[string]string{"kind": "metal"},
			msg: "The Metal GPU failed to run a command buffer: " + clip(l.text, 200),
			sugg: []string{
				"A command buffer that runs too long is killed by macOS (\"Impacting Interactivity\", a GPU timeout): split the work into smaller pieces (smaller batch or resolution, fewer layers per evaluation).",
				"Update macOS and the framework (MLX / PyTorch MPS); close other GPU-heavy apps.",
			}})
		return true
	case has(lc, "cuda out of memory", "hip out of memory", "cuda error: out of memory", "cuda_error_out_of_memory",
		"cudaerrormemoryallocation", "cublas_status_alloc_failed", "cudnn_status_alloc_failed", "out of memory while trying to allocate",
		"oom when allocating", "no available memory for the cache blocks", "resource exhausted: out of memory", "resource exhausted: out", "cuda runtime error (2)", "dst tensor is not initialized") ||
		has(lc, "outofmemoryerror") && has(lc, "torch", "cuda", "hip") ||
		has(lc, "resource_exhausted", "resourceexhausted") && has(lc, "memory", "oom", "allocat") ||
		strings.Contains(lc, "ran out of memory trying to allocate") ||
		// "CUDA error 2 at ggml-cuda.cu:6016: out of memory", a check that
		// failed with "CUDA: out of memory": the device allocator, said
		// by a native library in its own words.
		strings.Contains(lc, "out of memory") && has(lc, "cuda error", "cuda: out of memory", "cumemalloc", "cudamalloc") ||
		strings.Contains(lc, "failed to allocate") && has(lc, "cuda", "gpu", "device memory"):
		if has(lc, "device:cpu", "allocator cpu", "cpu_allocator") && !has(lc, "device:gpu", "allocator gpu") {
			return false // TensorFlow on the CPU: host memory
		}
		sc.add(i, cudaOOM(sc, i))
		return true
	}
	return gpuError(sc, i, l)
}

func cudaOOM(sc *scanner, i int) cand {
	w, wl := sc.window(i, 3)
	d := map[string]string{}
	req, reqB := "", 0.0
	for _, m := range []string{"tried to allocate ", "trying to allocate ", "failed to allocate request for ", "failed to allocate ", "oom when allocating tensor with shape"} {
		if req, reqB = sizeAfter(w, wl, m); req != "" {
			break
		}
	}
	total, totalB := sizeBefore(w, wl, " total capacity")
	if total == "" {
		total, totalB = sizeAfter(w, wl, "total capacity of ")
	}
	if total == "" {
		total, totalB = sizeAfter(w, wl, "total capacty of ")
	}
	free, _ := sizeBefore(w, wl, " free;")
	if free == "" {
		free, _ = sizeAfter(w, wl, "of which ")
	}
	frag, fragB := sizeBefore(w, wl, " is reserved by pytorch but unallocated")
	if reqB >= 1<<10 {
		d["requested"] = human(reqB)
	}
	d["total"], d["free"], d["reserved_unallocated"] = total, free, frag
	gpu := ""
	if n, ok := intAfter(wl, "gpu "); ok && n >= 0 {
		gpu = strconv.Itoa(n)
	} else if n, ok := intAfter(wl, "device:gpu:"); ok {
		gpu = strconv.Itoa(n)
	}
	d["gpu"] = gpu
	fw := "pytorch"
	switch {
	case has(wl, "oom when allocating", "bfc", "resourceexhaustederror", "tensorflow"):
		fw = "tensorflow"
		if k := strings.Index(wl, "with shape["); k >= 0 {
			if e := strings.IndexByte(w[k:], ']'); e > 0 {
				d["shape"] = w[k+10 : k+e+1]
			}
		}
	case has(wl, "xla", "resource_exhausted", "jax"):
		fw = "jax"
	case has(wl, "no available memory for the cache blocks"):
		fw = "vllm"
	}
	d["framework"] = fw
	for k, v := range d {
		if v == "" {
			delete(d, k)
		}
	}
	msg := "The GPU ran out of memory"
	if req != "" && reqB >= 1<<10 {
		msg += ": tried to allocate " + human(reqB)
	}
	if gpu != "" {
		msg += " on GPU " + gpu
	}
	var parts []string
	if total != "" {
		parts = append(parts, total+" total")
	}
	if free != "" {
		parts = append(parts, free+" free")
	}
	if len(parts) > 0 {
		msg += " (" + strings.Join(parts, ", ") + ")"
	}
	msg += "."
	var s []string
	if b := sc.batchSuggestion(); b != "" {
		s = append(s, b)
	}
	if fragB > 0 && (fragB >= reqB || fragB >= 0.1*totalB) {
		s = append(s, "Much memory ("+frag+") is reserved but unallocated — fragmentation: set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True.")
	}
	if totalB > 0 && reqB > totalB {
		msg += " A single allocation is larger than the whole GPU."
		s = append(s, "One tensor is bigger than the GPU: shorten the sequence length / image size or shard the model (FSDP, device_map=\"auto\"); batch size alone will not fix it.")
	}
	switch fw {
	case "tensorflow":
		s = append(s, "Reduce the batch size (model.fit(batch_size=...)).",
			"Let TensorFlow grow GPU memory instead of grabbing it all: tf.config.experimental.set_memory_growth(gpu, True).",
			"Use mixed precision: tf.keras.mixed_precision.set_global_policy('mixed_float16').")
	case "jax":
		s = append(s, "Reduce the batch size, or rematerialise activations with jax.checkpoint (remat).",
			"JAX preallocates 75% of GPU memory: XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_MEM_FRACTION=.9 changes that; stop other processes on the GPU.",
			"Use bf16 parameters/activations.")
	case "vllm":
		s = append(s, "Raise gpu_memory_utilization, lower max_model_len / max_num_seqs, or use a smaller or quantized model.")
	default:
		s = append(s, "Reduce the batch size (e.g. halve it) and keep the effective batch with gradient accumulation.",
			"Use mixed precision (torch.autocast with bf16/fp16) and gradient checkpointing (model.gradient_checkpointing_enable()).",
			"Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to reduce fragmentation.",
			"In evaluation, wrap in torch.no_grad()/torch.inference_mode() and keep loss.item(), not the loss tensor.")
	}
	s = append(s, "Free the GPU: check `nvidia-smi` for other processes (notebooks, previous runs) holding memory.")
	return cand{code: sdk.CodeCUDAOOM, conf: 0.95, msg: msg, sugg: s, details: d}
}

func metalOOM(sc *scanner, i int) cand {
	w, wl := sc.window(i, 2)
	d := map[string]string{}
	msg := "Apple GPU (Metal) memory ran out"
	if req, b := sizeAfter(w, wl, "attempting to allocate "); req != "" {
		d["requested"] = human(b)
		msg += ": tried to allocate " + human(b)
		if mx, mb := sizeAfter(w, wl, "maximum allowed buffer size of "); mx != "" {
			d["max_buffer"] = human(mb)
			msg += ", more than the largest allowed buffer (" + human(mb) + ")"
		}
	} else if req, b := sizeAfter(w, wl, "tried to allocate "); req != "" {
		if has(wl, "mps") {
			// PyTorch's MPS allocator prints 1024-based sizes as "MB"/"GB".
			_, b = parseSize(strings.NewReplacer("KB", "KiB", "MB", "MiB", "GB", "GiB").Replace(req))
		}
		d["requested"] = human(b)
		msg += ": tried to allocate " + human(b)
		if mx, _ := sizeAfter(w, wl, "max allowed: "); mx != "" {
			d["max_allowed"] = mx
			msg += " (max allowed " + mx + ")"
		}
	}
	fw := "mlx"
	if has(wl, "mps") {
		fw = "pytorch-mps"
	}
	d["framework"] = fw
	s := []string{"Reduce the batch size or sequence length; quantize the model (e.g. 4-bit with mlx_lm.convert -q) to cut memory."}
	if b := sc.batchSuggestion(); b != "" {
		s = append([]string{b}, s...)
	}
	if fw == "pytorch-mps" {
		s = append(s, "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 lifts PyTorch's cap (the system may then swap or freeze).")
	} else {
		s = append(s, "Limit MLX's cache: mx.metal.set_cache_limit(...) / mx.metal.set_memory_limit(...); evaluate lazily in smaller chunks.",
			"A single buffer cannot exceed the GPU's max buffer size: split the largest tensor (shorter context, smaller vocab chunks).")
	}
	s = append(s, "Close other GPU-heavy apps; on macOS the GPU share of unified memory can be raised with `sudo sysctl iogpu.wired_limit_mb=N`.")
	return cand{code: sdk.CodeMetalOOM, conf: 0.95, msg: msg + ".", sugg: s, details: d}
}

func gpuError(sc *scanner, i int, l *line) bool {
	lc := l.lc
	c := cand{code: sdk.CodeGPUError, conf: 0.9, details: map[string]string{}}
	switch {
	case has(lc, "to enable device-side assertions", "kernel errors might be asynchronously reported", "consider passing cuda_launch_blocking"):
		return false // PyTorch's boilerplate hint after any CUDA error, not the error itself
	case has(lc, "device-side assert", "device-side assertion") || strings.Contains(lc, "assertion `") && has(lc, ".cu:", "cuda"):
		c.details["kind"] = "device_assert"
		c.msg = "A CUDA kernel assertion failed (device-side assert): almost always an index out of range — a class label ≥ num_classes (or negative) in the loss, or a token id ≥ vocabulary size in an embedding."
		if k := strings.Index(lc, "assertion `"); k >= 0 {
			c.details["assertion"] = clip(l.text[k:], 200)
			c.msg += " Assertion: " + clip(l.text[k:], 160)
		}
		c.sugg = []string{
			"Check label ranges and embedding indices: labels must be in [0, num_classes), token ids < the embedding's num_embeddings (resize embeddings after adding tokens).",
			"Rerun on CPU, or with CUDA_LAUNCH_BLOCKING=1, to get the exact failing line and a readable error.",
		}
	case has(lc, "illegal memory access", "misaligned address", "unspecified launch failure", "an illegal instruction was encountered",
		"uncorrectable ecc error", "gpu is lost", "fallen off the bus", "fell off the bus", "cuda error: launch failure"):
		c.details["kind"] = "kernel_fault"
		c.msg = "A CUDA kernel crashed on the GPU: " + clip(l.text, 200)
		c.sugg = []string{
			"Rerun with CUDA_LAUNCH_BLOCKING=1 to find the op; an out-of-range index or a custom/compiled kernel (flash-attn, triton, apex) is the usual cause.",
			"Make sure torch, CUDA and compiled extensions come from matching builds; try disabling torch.compile / fused kernels.",
			"If it happens at random steps or mentions ECC/Xid, check the GPU's health (`nvidia-smi -q`, `dmesg | grep -i xid`).",
		}
	case has(lc, "no cuda-capable device", "cuda_error_no_device", "found no nvidia driver", "torch not compiled with cuda",
		"torch.cuda.is_available() is false", "cuda unavailable", "could not select device driver", "nvidia-container-cli",
		"unable to initialize backend 'cuda'", "no gpu/tpu found", "cuda-enabled jaxlib is not installed", "invalid device ordinal", "cuda is not available",
		"no cuda gpus are available", "no cuda devices"):
		c.details["kind"] = "no_gpu"
		c.msg = "No usable GPU was visible to the program: " + clip(l.text, 200)
		c.sugg = []string{
			"Check `nvidia-smi` works where the run executes; in Docker, run with GPUs (NVIDIA Container Toolkit, `--gpus all`).",
			"Check CUDA_VISIBLE_DEVICES and the device index you ask for.",
			"Install the CUDA build of the framework (`pip install torch --index-url https://download.pytorch.org/whl/cu121`, `pip install -U \"jax[cuda12]\"`), or run on CPU (map_location=\"cpu\").",
		}
	case has(lc, "driver on your system is too old", "driver version is insufficient", "driver/library version mismatch",
		"failed to initialize nvml", "no kernel image is available", "not compatible with the current pytorch installation", "cuda driver initialization failed",
		"mismatches the version that was used to compile pytorch", "does not match the version used to compile pytorch", "compiled with different cuda major versions", "cuda setup failed despite gpu",
		"cuda major version mismatch", "cudnn version incompatibility", "but jax was built against", "but source was compiled with"):
		c.details["kind"] = "driver"
		c.msg = "The GPU driver and the framework's CUDA build do not match: " + clip(l.text, 200)
		c.sugg = []string{
			"Install a framework build for the CUDA version your driver supports (see `nvidia-smi`, top right), or update the NVIDIA driver.",
			"\"no kernel image\": the wheel lacks kernels for this GPU's architecture — install a newer build that supports it.",
			"\"Driver/library version mismatch\" after a driver update: reboot (or reload the nvidia kernel modules).",
		}
	case has(lc, "not currently implemented for the mps device", "mps framework doesn't support"):
		c.details["kind"] = "mps_unsupported"
		c.msg = "The operation is not supported on Apple's MPS backend: " + clip(l.text, 200)
		c.sugg = []string{"Set PYTORCH_ENABLE_MPS_FALLBACK=1 to run unsupported ops on the CPU, or use float32 instead of float64 on MPS."}
	case has(lc, "cudnn_status_", "cublas_status_", "cudnn error", "cublas error", "dnn library initialization failed", "cuda error:", "cudaerror", "hip error:", "cusolver error", "curand error") &&
		!strings.Contains(lc, "nccl"): // NCCL's "unhandled cuda error" is a collective failure (distributed.go)
		c.details["kind"] = "cuda_error"
		c.conf = 0.8
		c.msg = "A CUDA library call failed: " + clip(l.text, 200)
		c.sugg = []string{
			"CUBLAS/CUDNN_STATUS_NOT_INITIALIZED or EXECUTION_FAILED often means the GPU was out of memory or an index was out of range: try a smaller batch and check labels.",
			"Rerun with CUDA_LAUNCH_BLOCKING=1 for the exact failing op; make sure torch, CUDA and cuDNN versions match.",
		}
	default:
		return false
	}
	sc.add(i, c)
	return true
}

var gateGPU = []string{"cud", "cublas", "gpu", "device", "memory", "metal", "mps", "xla", "resource", "nvidia", "nvml", "driver", "hip", "allocat", "kernel image", "ecc", "launch failure", "cuda setup failed", "compiled with", "built against", "cudnn version"}
