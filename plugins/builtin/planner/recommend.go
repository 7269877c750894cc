package planner

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Images recommended per framework. Pinned tags, so a plan made today
// runs the same image next month.
const (
	imagePyTorchGPU    = "nvcr.io/nvidia/pytorch:24.12-py3"
	imagePyTorch       = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"
	imageTensorFlowGPU = "tensorflow/tensorflow:2.17.0-gpu"
	imageTensorFlow    = "tensorflow/tensorflow:2.17.0"
	imageVLLM          = "vllm/vllm-openai:v0.6.4"
	imageShell         = "debian:bookworm-slim"
	defaultPython      = "3.12"
)

const (
	minute = 60
	hour   = 60 * minute
	mib    = 1 << 20
	gib    = 1 << 30
)

// hostInfo is what the recommendation needs to know about the machine.
type hostInfo struct {
	nvidia        int
	gpuName       string
	nvidiaRuntime bool
	apple         bool // darwin/arm64: Metal is there
	darwin        bool
}

func (a *analysis) host() hostInfo {
	h := a.in.Host
	hi := hostInfo{darwin: h.OS == "darwin", apple: h.OS == "darwin" && h.Arch == "arm64"}
	for _, g := range h.GPUs {
		if strings.EqualFold(g.Vendor, "nvidia") {
			hi.nvidia++
			if hi.gpuName == "" {
				hi.gpuName = g.Name
			}
		}
	}
	for _, r := range h.DockerRuntimes {
		hi.nvidiaRuntime = hi.nvidiaRuntime || r == "nvidia"
	}
	return hi
}

// recommend fills every recommendation field with a value and its reason.
func (a *analysis) recommend() *sdk.Recommendation {
	hi := a.host()
	a.platformRisks(hi)
	r := &sdk.Recommendation{}
	a.chooseSandbox(r, hi)
	a.chooseImage(r, hi)
	a.chooseTimeout(r)
	a.chooseMemory(r)
	a.chooseNetwork(r)
	a.chooseGPUs(r, hi)
	a.experienceNotes()
	return r
}

// platformRisks warns about frameworks this host cannot serve.
func (a *analysis) platformRisks(hi hostInfo) {
	h := a.in.Host
	if a.has("mlx") && !hi.apple && h.OS != "" {
		a.addRisk(sdk.SeverityMedium, riskMLXHost, "MLX is built for Apple silicon; on "+h.OS+"/"+h.Arch+
			" it needs the mlx[cpu] or mlx[cuda] build and has no Metal", a.frameworks["mlx"])
	}
	if hi.nvidia > 0 || h.OS == "" {
		return
	}
	switch {
	case len(a.cuda) > 0:
		a.addRisk(sdk.SeverityMedium, riskNoGPU, "the script asks for a CUDA device but the host has no NVIDIA GPU", a.cuda[0])
	case a.has("vllm") || a.has("deepspeed"):
		f := "vllm"
		if !a.has(f) {
			f = "deepspeed"
		}
		a.addRisk(sdk.SeverityMedium, riskNoGPU, f+" needs an NVIDIA GPU and the host has none", a.frameworks[f])
	}
}

func (a *analysis) riskCodes(maxRank int) string {
	var codes []string
	for _, r := range a.risks {
		if severityRank[r.Severity] <= maxRank && indexOf(codes, r.Code) < 0 {
			codes = append(codes, r.Code)
		}
	}
	return strings.Join(codes, ", ")
}

func (a *analysis) chooseSandbox(r *sdk.Recommendation, hi hostInfo) {
	h := a.in.Host
	risky := a.maxRisk() <= severityRank[sdk.SeverityHigh]
	gpuJob := hi.nvidia > 0 && (a.cudaFramework() != "" || len(a.cuda) > 0)
	needsMetal := hi.darwin && (a.has("mlx") || len(a.metal) > 0)
	switch {
	case needsMetal:
		r.Sandbox, r.SandboxReason = "process", "MLX/Metal needs the Apple GPU, which Docker containers on macOS cannot reach; run as a host process"
		if risky {
			a.note("the command has high-risk findings (" + a.riskCodes(1) + ") but needs Metal, so it would run directly on the host: review it first")
		}
	case !h.DockerAvailable:
		r.Sandbox, r.SandboxReason = "process", "Docker is not available on this host"
		if risky {
			a.note("the command has high-risk findings (" + a.riskCodes(1) + ") and Docker is not available to contain it: review it before running")
		}
	case risky:
		r.Sandbox, r.SandboxReason = "docker", "high-risk findings ("+a.riskCodes(1)+"): run in a container with capabilities dropped and only the workspace mounted"
		if gpuJob && !hi.nvidiaRuntime {
			r.SandboxReason += "; the GPUs stay out of reach because Docker has no nvidia runtime"
		}
	case gpuJob && !hi.nvidiaRuntime:
		r.Sandbox, r.SandboxReason = "process", "GPU job ("+a.cudaName()+") on a host with "+plural(hi.nvidia, "NVIDIA GPU")+
			", but Docker has no nvidia runtime, so a container could not see them"
	case gpuJob:
		r.Sandbox, r.SandboxReason = "docker", "GPU job ("+a.cudaName()+"): Docker has the nvidia runtime, so a container gets the GPUs with everything else isolated"
	case hi.darwin:
		r.Sandbox, r.SandboxReason = "process", "nothing risky was found; on macOS Docker runs a Linux VM with slow bind mounts and no Metal, so the host process with your own Python environment is the better fit"
	default:
		r.Sandbox, r.SandboxReason = "docker", "Docker is available: the container isolates the run (no network unless needed, capabilities dropped, workspace mounted)"
	}
}

// cudaName names what makes this a GPU job.
func (a *analysis) cudaName() string {
	if f := a.cudaFramework(); f != "" {
		return f
	}
	return "CUDA device requested"
}

func (a *analysis) chooseImage(r *sdk.Recommendation, hi hostInfo) {
	if r.Sandbox != "docker" {
		return
	}
	gpu := hi.nvidia > 0 && hi.nvidiaRuntime
	py := a.pyVersion
	if py == "" {
		py = defaultPython
	}
	var base []string // frameworks the image already has
	switch {
	case a.has("vllm") && gpu:
		r.Image, r.ImageReason = imageVLLM, "vLLM's own image carries the matching torch and CUDA kernels"
		base = []string{"vllm", "pytorch", "transformers"}
	case (a.has("pytorch") || a.has("transformers")) && !a.has("tensorflow") && gpu:
		r.Image, r.ImageReason = imagePyTorchGPU, "PyTorch on an NVIDIA GPU: NVIDIA's image matches CUDA, cuDNN and NCCL to the nvidia runtime"
		base = []string{"pytorch", "numpy", "lightning", "scipy"}
	case a.has("pytorch") || (a.has("transformers") && !a.has("tensorflow")):
		r.Image, r.ImageReason = imagePyTorch, "the official PyTorch image has torch preinstalled"
		base = []string{"pytorch", "numpy"}
	case a.has("tensorflow") || a.has("keras"):
		r.Image, r.ImageReason = imageTensorFlow, "the official TensorFlow image has TensorFlow and Keras preinstalled"
		if gpu {
			r.Image = imageTensorFlowGPU
			r.ImageReason = "TensorFlow on an NVIDIA GPU: the -gpu image carries the CUDA libraries TensorFlow was built against"
		}
		base = []string{"tensorflow", "keras", "numpy"}
	case a.lang == langShell && len(a.frameworks) == 0 && a.pyVersion == "":
		r.Image, r.ImageReason = imageShell, "a shell script with no Python frameworks: a small Debian base with bash and coreutils"
		return
	default:
		r.Image = "python:" + py + "-slim"
		r.ImageReason = "Python " + py + " on a slim Debian base"
		if len(a.frameworks) == 0 {
			r.ImageReason += "; no third-party frameworks were detected"
		}
	}
	var missing []string
	for _, f := range a.frameworkList() {
		if indexOf(base, f) < 0 {
			missing = append(missing, f)
		}
	}
	if len(missing) > 0 {
		r.ImageReason += "; the image needs " + strings.Join(missing, ", ") + " installed (a derived image, not a pip install at run time)"
	}
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
