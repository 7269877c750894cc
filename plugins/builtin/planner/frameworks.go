package planner

import (
	"path"
	"regexp"
	"sort"
	"strings"
)

// moduleFrameworks maps a top-level Python module to the frameworks its
// import means. Wrappers name the framework they run on too (lightning
// means pytorch), so the sandbox and image choices see it.
var moduleFrameworks = map[string][]string{
	"torch": {"pytorch"}, "torchvision": {"pytorch"}, "torchaudio": {"pytorch"}, "torchtext": {"pytorch"},
	"transformers": {"transformers"}, "tensorflow": {"tensorflow"}, "tf_keras": {"keras", "tensorflow"},
	"keras": {"keras"}, "jax": {"jax"}, "jaxlib": {"jax"}, "flax": {"flax", "jax"}, "optax": {"jax"},
	"equinox": {"jax"}, "haiku": {"jax"},
	"mlx": {"mlx"}, "mlx_lm": {"mlx-lm", "mlx"}, "mlx_vlm": {"mlx-vlm", "mlx"},
	"lightning": {"lightning", "pytorch"}, "pytorch_lightning": {"lightning", "pytorch"},
	"sklearn": {"scikit-learn"}, "xgboost": {"xgboost"}, "lightgbm": {"lightgbm"}, "catboost": {"catboost"},
	"fastai": {"fastai", "pytorch"}, "detectron2": {"detectron2", "pytorch"},
	"mmcv": {"mmcv", "pytorch"}, "mmengine": {"mmengine", "pytorch"}, "mmdet": {"mmdetection", "pytorch"},
	"numpy": {"numpy"}, "pandas": {"pandas"}, "polars": {"polars"}, "scipy": {"scipy"},
	"accelerate": {"accelerate", "pytorch"}, "deepspeed": {"deepspeed", "pytorch"}, "vllm": {"vllm", "pytorch"},
	"datasets": {"datasets"}, "diffusers": {"diffusers", "pytorch"}, "peft": {"peft", "pytorch"},
	"trl": {"trl", "pytorch"}, "timm": {"timm", "pytorch"}, "bitsandbytes": {"bitsandbytes", "pytorch"},
	"sentence_transformers": {"sentence-transformers", "pytorch"}, "ray": {"ray"},
	"onnxruntime": {"onnxruntime"}, "cupy": {"cupy"}, "spacy": {"spacy"}, "unsloth": {"unsloth", "pytorch"},
	"tensorflow_datasets": {"tensorflow"},
}

// cudaFrameworks use an NVIDIA GPU when one is there; the rest run on CPU
// unless the script asks for a device.
var cudaFrameworks = map[string]bool{
	"pytorch": true, "tensorflow": true, "jax": true, "vllm": true, "deepspeed": true,
	"cupy": true, "bitsandbytes": true, "transformers": true, "keras": true,
}

var (
	importRe     = regexp.MustCompile(`^import\s+(.+)$`)
	fromImportRe = regexp.MustCompile(`^from\s+([A-Za-z_][\w.]*)\s+import\b`)
	cudaRe       = gate(regexp.MustCompile(`\.cuda\(|["']cuda(?::\d+)?["']|jax\.devices\(["']gpu|tree_method\s*=\s*["']gpu_hist`), "cuda", "gpu")
	metalRe      = gate(regexp.MustCompile(`["']mps["']|torch\.backends\.mps|mx\.gpu|mx\.metal|mlx\.core\.metal`), "mps", "mx.", "metal")
	trainRe      = gate(regexp.MustCompile(`\.backward\(|optimizer\.step\(|\.fit\(|trainer\.train\(|\bTrainer\(|\bfor\s+epoch\s+in\b|\.train\(\)|value_and_grad\(|optax\.|train_step\(|SFTTrainer\(|LightningCLI\(`), "backward", "step(", ".fit(", "train", "Trainer", "epoch", "value_and_grad", "optax", "LightningCLI")
)

// importFrameworks records the frameworks a Python statement imports.
func (a *analysis) importFrameworks(s stmt, ev string) {
	code := strings.TrimSpace(s.Bare)
	var mods []string
	if m := fromImportRe.FindStringSubmatch(code); m != nil {
		mods = append(mods, m[1])
	} else if m := importRe.FindStringSubmatch(code); m != nil {
		for _, part := range strings.Split(m[1], ",") {
			if f := strings.Fields(part); len(f) > 0 {
				mods = append(mods, f[0])
			}
		}
	}
	for _, m := range mods {
		a.moduleFramework(m, ev)
		if top, _, _ := strings.Cut(m, "."); networkModules[top] || networkModules[m] {
			a.network = append(a.network, ev)
		}
	}
}

func (a *analysis) moduleFramework(mod, ev string) {
	top, _, _ := strings.Cut(mod, ".")
	for _, f := range moduleFrameworks[top] {
		if _, seen := a.frameworks[f]; !seen {
			a.frameworks[f] = ev
		}
	}
}

// commandFrameworks records what a launcher in argv implies: torchrun,
// accelerate launch, deepspeed, python -m mlx_lm.lora, mlx_lm.generate...
func (a *analysis) commandFrameworks(words []string, ev string) {
	words = skipRunner(words)
	if len(words) == 0 {
		return
	}
	base := path.Base(words[0])
	args := words[1:]
	switch {
	case base == "torchrun":
		a.moduleFramework("torch", ev)
		a.training = append(a.training, ev)
	case base == "deepspeed":
		a.moduleFramework("deepspeed", ev)
		a.training = append(a.training, ev)
	case base == "accelerate" && len(args) > 0 && args[0] == "launch":
		a.moduleFramework("accelerate", ev)
		a.training = append(a.training, ev)
	case base == "vllm":
		a.moduleFramework("vllm", ev)
	case strings.HasPrefix(base, "mlx_lm") || strings.HasPrefix(base, "mlx_vlm"):
		a.moduleCommand(base, args, ev)
	case isPython(base):
		if strings.HasPrefix(base, "python3.") {
			a.pyVersion = strings.TrimPrefix(base, "python")
		}
		if i := indexOf(args, "-m"); i >= 0 && i+1 < len(args) {
			a.moduleCommand(args[i+1], args[i+2:], ev)
		}
	}
	a.hubModelArgs(args, ev)
}

// moduleCommand handles `python -m MOD ARGS` and console scripts named
// after a module (mlx_lm.lora).
func (a *analysis) moduleCommand(mod string, args []string, ev string) {
	a.moduleFramework(mod, ev)
	if strings.HasPrefix(mod, "torch.distributed.") {
		a.training = append(a.training, ev)
	}
	sub := mod
	if len(args) > 0 {
		sub += " " + args[0]
	}
	if strings.Contains(sub, "lora") || strings.Contains(sub, "train") || strings.Contains(sub, "finetune") {
		a.training = append(a.training, ev)
	}
}

// hubModelArgs notices --model org/name arguments: the model is fetched
// from the Hugging Face Hub unless it is already cached.
func (a *analysis) hubModelArgs(args []string, ev string) {
	for i, w := range args {
		name, val, hasVal := strings.Cut(w, "=")
		if !strings.HasPrefix(name, "--model") && name != "--hf-path" && name != "--repo-id" {
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				continue
			}
			val = args[i+1]
		}
		if hubRepoRe.MatchString(val) {
			a.network = append(a.network, ev)
			return
		}
	}
}

var hubRepoRe = regexp.MustCompile(`^[A-Za-z0-9][\w.-]*/[\w.-]+$`)

// skipRunner drops environment runners: uv run, poetry run, conda run -n X.
func skipRunner(words []string) []string {
	if len(words) < 2 {
		return words
	}
	switch path.Base(words[0]) {
	case "uv", "poetry", "pipenv", "pixi", "hatch", "pdm", "rye":
		if words[1] == "run" {
			return skipFlags(words[2:], "p", "e", "w")
		}
	case "conda", "mamba", "micromamba":
		if words[1] == "run" {
			return skipFlags(words[2:], "n", "p")
		}
	}
	return words
}

// frameworkList returns the detected frameworks in a stable order.
func (a *analysis) frameworkList() []string {
	if len(a.frameworks) == 0 {
		return nil
	}
	out := make([]string, 0, len(a.frameworks))
	for f := range a.frameworks {
		out = append(out, f)
	}
	sort.Strings(out)
	return out
}

func (a *analysis) has(f string) bool {
	_, ok := a.frameworks[f]
	return ok
}

// cudaFramework returns the first framework (sorted) that would use an
// NVIDIA GPU, or "".
func (a *analysis) cudaFramework() string {
	for _, f := range a.frameworkList() {
		if cudaFrameworks[f] {
			return f
		}
	}
	return ""
}
