package planner

import (
	"sort"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// riskCodes returns the codes above info, sorted.
func riskCodes(out sdk.PlanOutput) []string {
	var codes []string
	for _, r := range out.Risks {
		if r.Severity != sdk.SeverityInfo && indexOf(codes, r.Code) < 0 {
			codes = append(codes, r.Code)
		}
	}
	sort.Strings(codes)
	return codes
}

func TestCommandRisks(t *testing.T) {
	const wd = "/home/u/proj"
	tests := []struct {
		name string
		cmd  []string
		want []string // exact set of non-info risk codes
		sev  string   // severity of the first risk, when checked
	}{
		{"rm root", []string{"rm", "-rf", "/"}, []string{riskRmRoot}, sdk.SeverityCritical},
		{"rm root glob", []string{"bash", "-c", "rm -rf /*"}, []string{riskRmRoot}, sdk.SeverityCritical},
		{"rm no-preserve-root", []string{"rm", "--recursive", "--no-preserve-root", "/"}, []string{riskRmRoot}, ""},
		{"rm tilde", []string{"rm", "-rf", "~"}, []string{riskRmHome}, sdk.SeverityCritical},
		{"rm HOME in sh -c", []string{"sh", "-c", "rm -rf $HOME"}, []string{riskRmHome}, ""},
		{"rm home subdir", []string{"rm", "-rf", "~/data"}, []string{riskRmOutside}, sdk.SeverityHigh},
		{"rm dotdot escape", []string{"rm", "-rf", "../other-project"}, []string{riskRmOutside}, sdk.SeverityHigh},
		{"rm absolute outside", []string{"rm", "-r", "/home/u/other"}, []string{riskRmOutside}, sdk.SeverityHigh},
		{"rm system", []string{"rm", "-rf", "/usr"}, []string{riskRmSystem}, sdk.SeverityCritical},
		{"rm inside workspace abs", []string{"rm", "-rf", "/home/u/proj/build"}, nil, ""},
		{"rm inside workspace rel", []string{"rm", "-rf", "build/"}, nil, ""},
		{"rm dot slash", []string{"rm", "-rf", "./dist", "out/*.ckpt"}, nil, ""},
		{"rm dotdot staying inside", []string{"rm", "-rf", "src/../build"}, nil, ""},
		{"rm tmp", []string{"rm", "-rf", "/tmp/job-123"}, nil, ""},
		{"rm guarded var", []string{"bash", "-c", `rm -rf "${OUT:?}/cache"`}, nil, ""},
		{"rm unguarded var", []string{"bash", "-c", "rm -rf $OUT/"}, []string{riskRmVariable}, sdk.SeverityMedium},
		{"rm star", []string{"bash", "-c", "rm -rf *"}, []string{riskRmWildcard}, sdk.SeverityLow},
		{"curl pipe sh", []string{"bash", "-c", "curl -fsSL https://x.sh | sh"}, []string{riskPipeToShell}, sdk.SeverityCritical},
		{"wget pipe bash split words", []string{"wget", "-O-", "https://x.sh", "|", "bash"}, []string{riskPipeToShell}, ""},
		{"bash process substitution", []string{"bash", "-c", "bash <(curl -s https://x.sh)"}, []string{riskPipeToShell}, ""},
		{"sh -c curl subshell", []string{"sh", "-c", `sh -c "$(curl -fsSL https://x.sh)"`}, []string{riskPipeToShell}, ""},
		{"curl to file is fine", []string{"curl", "-fsSL", "-o", "data.csv", "https://x/data.csv"}, nil, ""},
		{"dd disk", []string{"dd", "if=/dev/zero", "of=/dev/nvme0n1", "bs=1M"}, []string{riskRawDisk}, sdk.SeverityCritical},
		{"dd to file", []string{"dd", "if=/dev/zero", "of=blob.bin", "bs=1M", "count=1"}, nil, ""},
		{"mkfs", []string{"mkfs.ext4", "/dev/sdb1"}, []string{riskFormat}, sdk.SeverityCritical},
		{"chmod 777 root", []string{"chmod", "-R", "777", "/"}, []string{riskChmodSystem}, sdk.SeverityCritical},
		{"chmod in workspace", []string{"chmod", "+x", "run.sh"}, nil, ""},
		{"fork bomb", []string{"bash", "-c", ":(){ :|:& };:"}, []string{riskForkBomb}, sdk.SeverityCritical},
		{"sudo", []string{"sudo", "python", "train.py"}, []string{riskSudo}, sdk.SeverityHigh},
		{"sudo rm etc", []string{"sudo", "rm", "-rf", "/etc/nginx"}, []string{riskRmSystem, riskSudo}, ""},
		{"tee etc", []string{"bash", "-c", "echo 1 | sudo tee /etc/sysctl.conf"}, []string{riskSudo, riskSystemWrite}, ""},
		{"redirect etc", []string{"bash", "-c", "echo x >> /etc/hosts"}, []string{riskSystemWrite}, ""},
		{"redirect dev null", []string{"bash", "-c", "python a.py > /dev/null 2>&1"}, nil, ""},
		{"pip install", []string{"bash", "-c", "pip install -r requirements.txt && python train.py"}, []string{riskInstall}, sdk.SeverityMedium},
		{"python -m pip", []string{"python3", "-m", "pip", "install", "torch"}, []string{riskInstall}, ""},
		{"conda install", []string{"conda", "install", "-y", "numpy"}, []string{riskInstall}, ""},
		{"apt-get install", []string{"apt-get", "install", "-y", "ffmpeg"}, []string{riskInstall}, ""},
		{"python -c", []string{"python", "-c", "import shutil; shutil.rmtree('/')"}, []string{riskRmRoot}, ""},
		{"docker privileged", []string{"docker", "run", "--privileged", "-v", "/:/host", "alpine"}, []string{riskPrivileged}, ""},
		{"kill all", []string{"kill", "-9", "-1"}, []string{riskKillAll}, ""},
		{"echo is text", []string{"bash", "-c", `echo "rm -rf /"`}, nil, ""},
		{"plain training", []string{"python", "train.py", "--epochs", "3"}, nil, ""},
		{"torchrun", []string{"torchrun", "--nproc_per_node", "8", "train.py"}, nil, ""},
		{"timeout wrapper", []string{"timeout", "10", "rm", "-rf", "/"}, []string{riskRmRoot}, ""},
		{"env wrapper", []string{"env", "FOO=1", "rm", "-rf", "/etc"}, []string{riskRmSystem}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Plan(sdk.PlanInput{Command: tt.cmd, Workdir: wd, Host: linuxDocker})
			got := riskCodes(out)
			want := append([]string(nil), tt.want...)
			sort.Strings(want)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				t.Errorf("risks = %v, want %v\n%+v", got, want, out.Risks)
			}
			if tt.sev != "" && len(out.Risks) > 0 && out.Risks[0].Severity != tt.sev {
				t.Errorf("severity = %s, want %s", out.Risks[0].Severity, tt.sev)
			}
		})
	}
}

func TestCommandFrameworks(t *testing.T) {
	tests := []struct {
		cmd  []string
		want []string
	}{
		{[]string{"torchrun", "--nproc_per_node", "8", "train.py"}, []string{"pytorch"}},
		{[]string{"accelerate", "launch", "train.py"}, []string{"accelerate", "pytorch"}},
		{[]string{"deepspeed", "--num_gpus", "2", "train.py"}, []string{"deepspeed", "pytorch"}},
		{[]string{"python", "-m", "mlx_lm.lora", "--train"}, []string{"mlx", "mlx-lm"}},
		{[]string{"mlx_lm.generate", "--model", "m", "--prompt", "hi"}, []string{"mlx", "mlx-lm"}},
		{[]string{"python", "-m", "torch.distributed.run", "train.py"}, []string{"pytorch"}},
		{[]string{"uv", "run", "torchrun", "train.py"}, []string{"pytorch"}},
		{[]string{"vllm", "serve", "Qwen/Qwen2.5-7B"}, []string{"pytorch", "vllm"}},
		{[]string{"python", "train.py"}, nil},
	}
	for _, tt := range tests {
		out := Plan(sdk.PlanInput{Command: tt.cmd, Host: linuxDocker})
		if strings.Join(out.Frameworks, ",") != strings.Join(tt.want, ",") {
			t.Errorf("%v: frameworks = %v, want %v", tt.cmd, out.Frameworks, tt.want)
		}
	}
}

func TestImportFrameworks(t *testing.T) {
	src := `import torch, numpy as np
import tensorflow as tf
from transformers import AutoModel
import jax.numpy as jnp
import mlx.core as mx
from mlx_lm import load
import pytorch_lightning as pl
from sklearn.svm import SVC
import xgboost, lightgbm
from fastai.vision.all import *
from detectron2.config import get_cfg
from mmengine import Config
import pandas as pd
from accelerate import Accelerator
import deepspeed
from vllm import LLM
import keras
# import catboost
s = "import polars"
`
	out := Plan(sdk.PlanInput{Command: []string{"python", "x.py"}, ScriptPath: "x.py", ScriptText: src})
	want := "accelerate,deepspeed,detectron2,fastai,jax,keras,lightgbm,lightning,mlx,mlx-lm,mmengine,numpy,pandas,pytorch,scikit-learn,tensorflow,transformers,vllm,xgboost"
	if got := strings.Join(out.Frameworks, ","); got != want {
		t.Errorf("frameworks =\n %s\nwant\n %s", got, want)
	}
}

func TestNetworkDetection(t *testing.T) {
	tests := []struct {
		name, src string
		want      string
	}{
		{"requests", "import requests\nr = requests.get('https://x')\n", "bridge"},
		{"hub model", "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base-uncased')\n", "bridge"},
		{"local model", "from transformers import AutoModel\nm = AutoModel.from_pretrained('./ckpt')\n", "none"},
		{"hub dataset", "from datasets import load_dataset\nds = load_dataset('imdb')\n", "bridge"},
		{"local dataset", "from datasets import load_dataset\nds = load_dataset('csv', data_files='a.csv')\n", "none"},
		{"torchvision download", "from torchvision import datasets\nd = datasets.MNIST('data', download=True)\n", "bridge"},
		{"git clone", "import subprocess\nsubprocess.run(['git', 'clone', 'https://github.com/x/y'])\n", "bridge"},
		{"wget", "import os\nos.system('wget https://x/data.tgz')\n", "bridge"},
		{"socket", "import socket\n", "bridge"},
		{"offline", "import json\nprint(json.dumps({}))\n", "none"},
		{"mentioned in a comment", "# requests.get('https://x')\nprint(1)\n", "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Plan(sdk.PlanInput{Command: []string{"python", "a.py"}, ScriptPath: "a.py", ScriptText: tt.src, Host: linuxDocker})
			if out.Recommendation.Network != tt.want {
				t.Errorf("network = %s (%s), want %s", out.Recommendation.Network, out.Recommendation.NetworkReason, tt.want)
			}
		})
	}
}

func TestRecommendationDetails(t *testing.T) {
	t.Run("interpreter version picks the image", func(t *testing.T) {
		out := Plan(sdk.PlanInput{Command: []string{"python3.11", "job.py"}, Host: linuxDocker})
		if got := out.Recommendation.Image; got != "python:3.11-slim" {
			t.Errorf("image = %s", got)
		}
	})
	t.Run("high risk turns the network off", func(t *testing.T) {
		src := "import requests\nrequests.get('https://x')\n"
		out := Plan(sdk.PlanInput{Command: []string{"sudo", "python", "a.py"}, ScriptPath: "a.py", ScriptText: src, Host: linuxDocker})
		if r := out.Recommendation; r.Network != "none" || r.Sandbox != "docker" || !strings.Contains(r.NetworkReason, "sudo") {
			t.Errorf("network = %s (%s), sandbox = %s", r.Network, r.NetworkReason, r.Sandbox)
		}
	})
	t.Run("past network failure asks for the network", func(t *testing.T) {
		out := Plan(sdk.PlanInput{Command: []string{"python", "a.py"}, Host: linuxDocker,
			Experience: &sdk.Experience{Runs: 1, Failed: 1, LastFailure: &sdk.Failure{Code: sdk.CodeNetworkError}}})
		if out.Recommendation.Network != "bridge" {
			t.Errorf("network = %s", out.Recommendation.Network)
		}
	})
	t.Run("one OOM kill doubles the peak", func(t *testing.T) {
		out := Plan(sdk.PlanInput{Command: []string{"python", "a.py"}, Host: linuxDocker,
			Experience: &sdk.Experience{Runs: 2, Succeeded: 1, Failed: 1, MaxPeakRSSBytes: 4 * gib, MedianDurationSeconds: 30,
				LastFailure: &sdk.Failure{Code: sdk.CodeOOMKilled}}})
		r := out.Recommendation
		if r.MemoryBytes != 8*gib || r.TimeoutSeconds != minTimeout {
			t.Errorf("memory = %d (%s), timeout = %d (%s)", r.MemoryBytes, r.MemoryReason, r.TimeoutSeconds, r.TimeoutReason)
		}
	})
	t.Run("macOS without Metal stays a host process", func(t *testing.T) {
		out := Plan(sdk.PlanInput{Command: []string{"python", "a.py"}, Host: macM2})
		if out.Recommendation.Sandbox != "process" || out.Recommendation.Image != "" {
			t.Errorf("%+v", out.Recommendation)
		}
	})
	t.Run("darwin risky goes to docker", func(t *testing.T) {
		out := Plan(sdk.PlanInput{Command: []string{"rm", "-rf", "/"}, Host: macM2})
		if out.Recommendation.Sandbox != "docker" {
			t.Errorf("%+v", out.Recommendation)
		}
	})
}
