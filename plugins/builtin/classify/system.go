package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Host memory, disk space, permissions and missing files.

func matchMemory(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeOOMKilled, conf: 0.9, sugg: hostOOMSuggestions(sc.in), details: map[string]string{}}
	switch {
	case strings.Contains(lc, "unable to allocate") && has(lc, "array", "shape"):
		size, b := sizeAfter(l.text, lc, "unable to allocate ")
		c.msg = "numpy could not allocate " + orDefault(size, "an array")
		if size != "" {
			c.details["requested"] = human(b)
			c.msg = "numpy could not allocate " + human(b)
		}
		if k := strings.Index(lc, "with shape "); k >= 0 {
			shape := l.text[k+11:]
			if e := strings.IndexByte(shape, ')'); e >= 0 {
				shape = shape[:e+1]
			}
			c.details["shape"] = shape
			c.msg += " for an array of shape " + shape
		}
		c.msg += ": the process ran out of host memory."
		c.sugg = append([]string{"Use a smaller dtype (float32/float16 instead of float64), process the data in chunks, or np.memmap it instead of holding it whole."}, c.sugg...)
	case has(lc, "std::bad_alloc", "bad_alloc"):
		c.msg = "A C++ allocation failed (std::bad_alloc): the process ran out of host memory."
	case has(lc, "defaultcpuallocator", "cpu_allocator") && has(lc, "not enough memory", "can't allocate"):
		size, b := sizeAfter(l.text, lc, "you tried to allocate ")
		c.msg = "PyTorch could not allocate host memory"
		if size != "" {
			c.details["requested"] = human(b)
			c.msg += " (" + human(b) + " requested)"
		}
		c.msg += "."
	case has(lc, "out of memory: killed process", "out of memory: kill process", "invoked oom-killer", "oom-kill", "oom_kill", "memory cgroup out of memory",
		"oomkilled", "oom killed", "oom-killed", "oom killer", "killed process") && !has(lc, "cuda", "gpu") && !notOOMFlag(lc):
		c.msg = "The kernel's OOM killer stopped the process: host memory ran out."
		c.details["source"] = "kernel"
	case has(lc, "oom when allocating", "resource_exhausted", "resourceexhausted") && has(lc, "device:cpu", "allocator cpu", "cpu_allocator") && !has(lc, "device:gpu", "allocator gpu"):
		c.msg = "TensorFlow ran out of host (CPU) memory: " + clip(l.text, 200)
	case has(lc, "paging file is too small", "[winerror 1455]"):
		c.msg = "Windows ran out of virtual memory (the paging file is too small): " + clip(l.text, 200)
		c.sugg = append([]string{"Enlarge the Windows paging file (System > Advanced > Performance > Virtual memory) or lower DataLoader num_workers: each worker loads its own copy of the CUDA libraries."}, c.sugg...)
	case has(lc, "cannot allocate memory", "[errno 12]", "enomem"):
		c.msg = "The system could not allocate memory (ENOMEM): " + clip(l.text, 200)
	case has(lc, "java.lang.outofmemoryerror", "runtime: out of memory", "all available ram", "node running low on memory", "node was low on resource: memory",
		"memory limit exceeded", "exceeded memory limit", "exceeds memory limit", "container killed due to memory"):
		c.msg = "The process ran out of host memory: " + clip(l.text, 200)
	case strings.HasPrefix(lc, "memoryerror") || strings.Contains(lc, "_arraymemoryerror") || sc.roles[i] == roleExc && strings.HasSuffix(sc.excType(i), "MemoryError"):
		// MemoryError is an allocation the allocator refused, not a kill:
		// usually one request bigger than what is free (a huge array from
		// a wrong shape or dtype), so the measured peak can be small and
		// comparing it with the limit says little.
		c.msg = "Python raised MemoryError: an allocation was refused"
		if m := sc.excMsg(i); m != "" {
			c.msg += " (" + clip(m, 160) + ")"
		}
		c.msg += ". It is usually one request larger than the memory left, not a slow leak"
		if sc.in.PeakRSSBytes > 0 {
			c.msg += " (the measured peak, " + human(float64(sc.in.PeakRSSBytes)) + ", does not include the refused request)"
		}
		c.msg += "."
		c.details["kind"] = "allocation_refused"
		c.sugg = []string{
			"Find the allocation in the traceback and compute its size (elements × bytes per element): a shape or dtype mistake (float64, an outer product, a dense matrix of a sparse one) asks for far more than intended.",
			"Allocate less at once: process the data in chunks, use a smaller dtype, or a sparse/memory-mapped array.",
			"If the size is right, give the run more memory (or a 64-bit Python: a 32-bit one refuses anything over ~2 GB).",
		}
	case strings.Contains(lc, "out of memory") && !has(lc, "cuda", "gpu", "hip", "metal", "mps", "device", "xla") && sc.roles[i] != roleText:
		c.msg = "The process ran out of memory: " + clip(l.text, 200)
		c.conf = 0.7
	default:
		return false
	}
	sc.add(i, c)
	return true
}

func (sc *scanner) excType(i int) string {
	if t := sc.tbOf[i]; t >= 0 {
		return sc.tbs[t].typ
	}
	return ""
}

func (sc *scanner) excMsg(i int) string {
	if t := sc.tbOf[i]; t >= 0 && sc.tbs[t].exc == i {
		return sc.tbs[t].msg
	}
	return ""
}

func matchDisk(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeDiskFull, conf: 0.95, details: map[string]string{}}
	switch {
	case has(lc, "no space left on device", "[errno 28]", "enospc", "not enough space on the disk", "not enough free disk space"):
		c.msg = "The disk is full (no space left on device)"
	case has(lc, "disk quota exceeded", "[errno 122]", "edquot"):
		c.msg = "The disk quota is exceeded"
		c.details["kind"] = "quota"
	case has(lc, "not enough disk space", "insufficient disk space", "out of disk space"):
		c.msg = "There is not enough free disk space"
		if need, b := sizeAfter(l.text, lc, "needed: "); need != "" {
			c.details["needed"] = human(b)
			c.msg += " (" + human(b) + " needed)"
		}
	case strings.Contains(lc, "unexpected pos") && has(lc, "inline_container", "enforce fail") ||
		strings.Contains(lc, "pytorchstreamwriter failed writing file"):
		// torch.save's zip writer reports a short write this way; it is
		// almost always a full disk (or quota) under the checkpoint.
		c.msg = "Writing a checkpoint failed part-way (torch.save short write), which almost always means the disk is full"
		c.details["kind"] = "short_write"
		c.conf = 0.8
	case has(lc, "insufficient shared memory", "out of shared memory", "raise your shared memory limit"):
		c.msg = "The shared-memory filesystem (/dev/shm) is full"
		c.conf = 0.8
	default:
		return false
	}
	path := quotedAfter(l.text, lc, "no space left on device:")
	if path == "" {
		path = quotedAfter(l.text, lc, "quota exceeded:")
	}
	shm := has(lc, "/dev/shm", "shared memory", "</torch_", "unable to write to file <")
	switch {
	case shm:
		c.details["location"] = "/dev/shm"
		c.msg += " in shared memory (/dev/shm), which PyTorch DataLoader workers use to pass batches"
		c.sugg = []string{
			"In Docker, give the container more shared memory: `--shm-size=8g` or `--ipc=host`.",
			"Or lower DataLoader num_workers (0 avoids shared memory), or use torch.multiprocessing.set_sharing_strategy('file_system').",
		}
	default:
		if path != "" {
			c.details["path"] = path
			c.msg += " while writing " + path
		}
		c.sugg = []string{
			"Free space (`df -h` shows which filesystem is full): delete old checkpoints, `pip cache purge`, `docker system prune`, clean ~/.cache/huggingface.",
			"Point large caches and outputs at a bigger disk: HF_HOME, TORCH_HOME, TMPDIR, and the output/checkpoint directory.",
			"Save fewer checkpoints (e.g. save_total_limit) or smaller ones (safetensors, no optimizer state).",
		}
	}
	c.msg += "."
	if l.weak {
		c.soft = true
	}
	sc.add(i, c)
	return true
}

func matchPermission(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	if !has(lc, "permission denied", "permissionerror", "[errno 13]", "[errno 1]", "operation not permitted", "read-only file system", "[errno 30]", "eacces", "eperm", "access is denied") {
		// EACCES in the C library's other locales ("...: 权限不够").
		k := hasAny(lc, "权限不够", "權限不足", "keine berechtigung", "permission non accordée", "permiso denegado", "許可がありません")
		if k < 0 {
			return false
		}
		lc = lc[:k] + "permission denied" // the path before it, as in English
	}
	path := quotedAfter(l.text, lc, "permission denied:")
	if path == "" {
		path = quotedAfter(l.text, lc, "read-only file system:")
	}
	if path == "" {
		path = quotedAfter(l.text, lc, "not permitted:")
	}
	access := false // "cannot VERB 'PATH': Permission denied" (coreutils): a file's access, not an exec
	if path == "" && strings.HasSuffix(lc, ": permission denied") {
		head := l.text[:len(l.text)-len(": permission denied")]
		if k := strings.LastIndex(strings.ToLower(head), "cannot "); k >= 0 {
			path, access = firstQuoted(head[k:]), true
		}
		if path == "" {
			path, access = segmentBefore(l.text, lc, ": permission denied"), false
		}
	}
	c := cand{code: sdk.CodePermissionDenied, conf: 0.9, details: setDetail(nil, "path", path)}
	c.msg = "Permission denied"
	if path != "" {
		c.msg += " on " + path
	}
	switch {
	case has(lc, "read-only file system", "[errno 30]"):
		c.msg = "The file system is read-only" + strings.TrimPrefix(c.msg, "Permission denied") + "."
		c.sugg = []string{"Write outputs and caches to a writable location (the workspace, /tmp, or set HF_HOME/TMPDIR); in Docker, mount that path read-write."}
	case strings.Contains(lc, "(publickey"):
		c.msg = "SSH authentication was refused (publickey)."
		c.sugg = []string{"Add the right SSH key (ssh-add, ~/.ssh/config) or use an HTTPS URL with a token."}
	case strings.Contains(lc, "docker.sock") || strings.Contains(lc, "docker daemon"):
		c.msg = "The user cannot talk to the Docker daemon (permission denied on the socket)."
		c.sugg = []string{"Add the user to the docker group (`sudo usermod -aG docker $USER`, then log in again)."}
	case sc.in.ExitCode == 126 || strings.HasSuffix(lc, ": permission denied") && !strings.Contains(lc, "[errno") && !access:
		c.msg += ": the file is not executable or not accessible to this user."
		c.sugg = []string{"Make a script executable with `chmod +x " + orDefault(path, "FILE") + "` or run it through its interpreter (`bash x.sh`, `python x.py`).", "Check the owner and mode with `ls -l`."}
	default:
		c.msg += "."
		c.sugg = []string{
			"Check the owner and mode with `ls -ld " + orDefault(path, "PATH") + "`; write to a directory you own (the workspace, /tmp).",
			"In Docker, files written by root in a mounted directory block later runs: runbox runs as your uid, so fix them once with `sudo chown -R $USER`.",
		}
	}
	sc.add(i, c)
	return true
}

var gateMemory = []string{"memory", "alloc", "oom", "killed process", "all available ram", "paging file", "winerror 1455"}

var gateDisk = []string{"space", "quota", "[errno 28]", "[errno 122]", "enospc", "edquot", "shared memory", "unexpected pos", "failed writing file"}

var gatePermission = []string{"permission", "权限不够", "權限不足", "keine berechtigung", "permission non accordée", "permiso denegado", "許可がありません", "permiso", "berechtigung", "許可が", "[errno 13]", "[errno 1]", "not permitted", "read-only file system", "[errno 30]", "eacces", "eperm", "access is denied"}
