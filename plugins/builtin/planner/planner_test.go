package planner

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var (
	linuxDocker = sdk.HostFacts{OS: "linux", Arch: "amd64", CPUs: 16, MemoryBytes: 64 * gib,
		DockerAvailable: true, DockerRuntimes: []string{"runc"}}
	linuxGPU = sdk.HostFacts{OS: "linux", Arch: "amd64", CPUs: 32, MemoryBytes: 256 * gib,
		DockerAvailable: true, DockerRuntimes: []string{"runc", "nvidia"},
		GPUs: []sdk.GPU{{Vendor: "nvidia", Name: "NVIDIA A100-SXM4-80GB", MemoryBytes: 80 * gib}, {Vendor: "nvidia", Name: "NVIDIA A100-SXM4-80GB", MemoryBytes: 80 * gib}}}
	linuxGPUNoRuntime = sdk.HostFacts{OS: "linux", Arch: "amd64", CPUs: 32, MemoryBytes: 128 * gib,
		DockerAvailable: true, DockerRuntimes: []string{"runc"}, GPUs: []sdk.GPU{{Vendor: "nvidia", Name: "NVIDIA RTX 4090"}}}
	linuxBare = sdk.HostFacts{OS: "linux", Arch: "amd64", CPUs: 4, MemoryBytes: 8 * gib}
	macM2     = sdk.HostFacts{OS: "darwin", Arch: "arm64", CPUs: 12, MemoryBytes: 32 * gib,
		DockerAvailable: true, GPUs: []sdk.GPU{{Vendor: "apple", Name: "Apple M2 Max"}}}
)

// planCase is one golden case. The script, when named, is read from
// testdata and passed as ScriptText, as the host does.
type planCase struct {
	name   string
	script string
	in     sdk.PlanInput

	smokeFlag string   // the flag the plan must report; "" = no smoke
	smokeArgs []string // what the smoke command appends, when checked
	risks     []string // risk codes that must appear
	absent    []string // risk codes that must not appear
	noRisks   bool     // no risk at all above info
	sandbox   string
	network   string
	gpus      string
	frames    []string // frameworks that must be detected
}

func py(script string, args ...string) []string {
	return append([]string{"python", script}, args...)
}

var cases = []planCase{
	{name: "argparse_dryrun", script: "argparse_dryrun.py", in: sdk.PlanInput{Command: py("argparse_dryrun.py", "photos/"), Workdir: "/home/u/proj", Host: linuxDocker},
		smokeFlag: "--dry-run", smokeArgs: []string{"--dry-run"}, noRisks: true, sandbox: "docker", network: "none"},
	{name: "argparse_dryrun_already", script: "argparse_dryrun.py", in: sdk.PlanInput{Command: py("argparse_dryrun.py", "photos/", "-n"), Host: linuxDocker}},
	{name: "click_smoke", script: "click_smoke.py", in: sdk.PlanInput{Command: py("click_smoke.py", "data.csv"), Host: linuxDocker},
		smokeFlag: "--smoke", smokeArgs: []string{"--smoke"}, noRisks: true, frames: []string{"pandas"}},
	{name: "train_max_steps_gpu", script: "train_max_steps.py", in: sdk.PlanInput{Command: py("train_max_steps.py", "--epochs", "3"), Host: linuxGPU},
		smokeFlag: "--max-steps", smokeArgs: []string{"--max-steps", "2"}, sandbox: "docker", network: "bridge", gpus: "all",
		frames: []string{"pytorch", "transformers", "datasets"}},
	{name: "train_max_steps_no_gpu", script: "train_max_steps.py", in: sdk.PlanInput{Command: py("train_max_steps.py"), Host: linuxDocker},
		smokeFlag: "--max-steps", risks: []string{riskNoGPU}, network: "bridge"},
	{name: "lightning_fast_dev_run", script: "lightning_fast_dev_run.py", in: sdk.PlanInput{Command: py("lightning_fast_dev_run.py"), Host: linuxGPUNoRuntime},
		smokeFlag: "--fast-dev-run", smokeArgs: []string{"--fast-dev-run", "1"}, sandbox: "process", gpus: "all", frames: []string{"lightning", "pytorch"}},
	{name: "lightning_cli", script: "lightning_cli.py", in: sdk.PlanInput{Command: py("lightning_cli.py", "fit"), Host: linuxDocker},
		smokeFlag: "--trainer.fast_dev_run", smokeArgs: []string{"--trainer.fast_dev_run", "1"}},
	{name: "absl_smoke", script: "absl_smoke.py", in: sdk.PlanInput{Command: py("absl_smoke.py"), Host: linuxDocker},
		smokeFlag: "--smoke_test", smokeArgs: []string{"--smoke_test"}, noRisks: true, frames: []string{"jax"}},
	{name: "typer_dry", script: "typer_dry.py", in: sdk.PlanInput{Command: py("typer_dry.py", "my-bucket"), Host: linuxDocker},
		smokeFlag: "--dry-run", smokeArgs: []string{"--dry-run"}},
	{name: "subparser_train", script: "subparsers.py", in: sdk.PlanInput{Command: py("subparsers.py", "train"), Host: linuxDocker},
		smokeFlag: "--dry-run"},
	{name: "subparser_eval", script: "subparsers.py", in: sdk.PlanInput{Command: py("subparsers.py", "eval", "--checkpoint", "c.pt"), Host: linuxDocker}},
	{name: "no_smoke", script: "no_smoke.py", in: sdk.PlanInput{Command: py("no_smoke.py"), Host: linuxDocker},
		noRisks: true, network: "none", frames: []string{"numpy", "pandas", "scikit-learn"}},
	{name: "mlx_mac", script: "mlx_generate.py", in: sdk.PlanInput{Command: py("mlx_generate.py"), Host: macM2},
		smokeFlag: "--smoke-test", sandbox: "process", network: "bridge", frames: []string{"mlx", "mlx-lm"}},
	{name: "mlx_linux", script: "mlx_generate.py", in: sdk.PlanInput{Command: py("mlx_generate.py"), Host: linuxDocker},
		smokeFlag: "--smoke-test", risks: []string{riskMLXHost}},
	{name: "mlx_lm_lora_command", in: sdk.PlanInput{Command: []string{"python", "-m", "mlx_lm.lora", "--model", "mlx-community/Llama-3.2-1B-Instruct-4bit", "--train", "--data", "./data"}, Host: macM2},
		smokeFlag: "--iters", smokeArgs: []string{"--iters", "2"}, sandbox: "process", network: "bridge", frames: []string{"mlx-lm"}},
	{name: "hf_trainer", script: "hf_trainer.py", in: sdk.PlanInput{Command: []string{"torchrun", "--nproc_per_node", "2", "hf_trainer.py", "--output_dir", "out"}, Host: linuxGPU},
		smokeFlag: "--max_steps", smokeArgs: []string{"--max_steps", "2"}, risks: []string{riskRemoteCode}, gpus: "all", network: "bridge"},
	{name: "gpu_nvidia_runtime", script: "gpu_train.py", in: sdk.PlanInput{Command: py("gpu_train.py"), Host: linuxGPU},
		sandbox: "docker", gpus: "all"},
	{name: "gpu_no_runtime", script: "gpu_train.py", in: sdk.PlanInput{Command: py("gpu_train.py"), Host: linuxGPUNoRuntime},
		sandbox: "process", gpus: "all"},
	{name: "gpu_script_no_gpu", script: "gpu_train.py", in: sdk.PlanInput{Command: py("gpu_train.py"), Host: linuxBare},
		sandbox: "process", risks: []string{riskNoGPU}},
	{name: "agent_risky", script: "agent_risky.py", in: sdk.PlanInput{Command: py("agent_risky.py"), Workdir: "/work/job", Host: linuxDocker},
		risks:   []string{riskRmHome, riskExecRemote, riskInstall, riskSecretEnv, riskRmSystem, riskSudo, riskChmodSystem, riskSystemWrite, riskShellDynamic},
		sandbox: "docker", network: "none"},
	{name: "docs_only", script: "docs_only.py", in: sdk.PlanInput{Command: py("docs_only.py"), Workdir: "/work/job", Host: linuxDocker},
		noRisks: true, network: "none"},
	{name: "build_safe_sh", script: "build_safe.sh", in: sdk.PlanInput{Command: []string{"bash", "build_safe.sh"}, Workdir: "/work/job", Host: linuxDocker},
		smokeFlag: "--dry-run", smokeArgs: []string{"--dry-run"}, noRisks: true, network: "none"},
	{name: "deploy_risky_sh", script: "deploy_risky.sh", in: sdk.PlanInput{Command: []string{"sh", "deploy_risky.sh"}, Host: linuxDocker},
		risks:   []string{riskPipeToShell, riskSudo, riskInstall, riskRmHome, riskRmVariable, riskRawDisk, riskSystemWrite, riskForkBomb},
		sandbox: "docker", network: "none"},
	{name: "experience_oom", script: "train_max_steps.py", in: sdk.PlanInput{Command: py("train_max_steps.py"), Host: linuxGPU,
		Experience: &sdk.Experience{Runs: 5, Succeeded: 2, Failed: 3, FailureCodes: map[string]int{"OOM_KILLED": 2, "CUDA_OOM": 1},
			MedianDurationSeconds: 750, MaxPeakRSSBytes: 20 * gib, LastFailure: &sdk.Failure{Code: "CUDA_OOM", Message: "CUDA out of memory"}}},
		smokeFlag: "--max-steps"},
	{name: "experience_timeout", script: "no_smoke.py", in: sdk.PlanInput{Command: py("no_smoke.py"), Host: linuxBare,
		Experience: &sdk.Experience{Runs: 3, Succeeded: 1, Failed: 2, FailureCodes: map[string]int{"TIMEOUT": 2},
			MedianDurationSeconds: 1200, MaxPeakRSSBytes: 7 * gib, LastFailure: &sdk.Failure{Code: "TIMEOUT"}}}},
	{name: "no_script_text", in: sdk.PlanInput{Command: py("missing.py"), ScriptPath: "missing.py", Host: linuxDocker}, noRisks: true},
}

func TestPlanGolden(t *testing.T) {
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := c.in
			if c.script != "" {
				b, err := os.ReadFile(filepath.Join("testdata", c.script))
				if err != nil {
					t.Fatal(err)
				}
				in.ScriptPath, in.ScriptText = c.script, string(b)
			}
			out := Plan(in)
			checkCase(t, c, in, out)
			got, err := json.MarshalIndent(out, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", c.name+".json")
			if *update {
				if err := os.WriteFile(golden, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if !bytes.Equal(bytes.TrimSpace(want), got) {
				t.Errorf("plan differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

func checkCase(t *testing.T, c planCase, in sdk.PlanInput, out sdk.PlanOutput) {
	t.Helper()
	switch {
	case c.smokeFlag == "" && out.Smoke != nil:
		t.Errorf("smoke = %+v, want none", out.Smoke)
	case c.smokeFlag != "" && out.Smoke == nil:
		t.Errorf("no smoke, want %s (notes: %q)", c.smokeFlag, out.Notes)
	case c.smokeFlag != "":
		if out.Smoke.Flag != c.smokeFlag {
			t.Errorf("smoke flag = %q, want %q", out.Smoke.Flag, c.smokeFlag)
		}
		// The reported flag is exactly one the script (or the command's
		// known CLI, or a framework the script uses) defines.
		name := strings.TrimPrefix(strings.TrimPrefix(out.Smoke.Flag, "--trainer."), "--")
		if in.ScriptText != "" && !strings.Contains(in.ScriptText, out.Smoke.Flag) &&
			!strings.Contains(in.ScriptText, `"`+name+`"`) && !strings.Contains(in.ScriptText, "LightningCLI") &&
			!strings.Contains(in.ScriptText, "HfArgumentParser") {
			t.Errorf("smoke flag %q does not appear in the script", out.Smoke.Flag)
		}
		if !strings.Contains(out.Smoke.Reason, out.Smoke.Flag) {
			t.Errorf("smoke reason %q does not name the flag", out.Smoke.Reason)
		}
		if got := out.Smoke.Command[:len(in.Command)]; strings.Join(got, "\x00") != strings.Join(in.Command, "\x00") {
			t.Errorf("smoke command %q does not start with the command", out.Smoke.Command)
		}
		if c.smokeArgs != nil {
			if got := out.Smoke.Command[len(in.Command):]; strings.Join(got, " ") != strings.Join(c.smokeArgs, " ") {
				t.Errorf("smoke appends %q, want %q", got, c.smokeArgs)
			}
		}
	}
	codes := map[string]bool{}
	for _, r := range out.Risks {
		codes[r.Code] = true
		if c.noRisks && r.Severity != sdk.SeverityInfo {
			t.Errorf("unexpected risk %+v", r)
		}
		if r.Evidence == "" || r.Message == "" {
			t.Errorf("risk without evidence or message: %+v", r)
		}
	}
	for _, code := range c.risks {
		if !codes[code] {
			t.Errorf("risk %s missing; got %v", code, out.Risks)
		}
	}
	for _, code := range c.absent {
		if codes[code] {
			t.Errorf("risk %s present", code)
		}
	}
	rec := out.Recommendation
	if rec == nil {
		t.Fatal("no recommendation")
	}
	for _, f := range [][3]string{{"sandbox", c.sandbox, rec.Sandbox}, {"network", c.network, rec.Network}, {"gpus", c.gpus, rec.GPUs}} {
		if f[1] != "" && f[1] != f[2] {
			t.Errorf("%s = %q, want %q", f[0], f[2], f[1])
		}
	}
	checkReasons(t, rec)
	for _, f := range c.frames {
		if indexOf(out.Frameworks, f) < 0 {
			t.Errorf("framework %s not detected: %v", f, out.Frameworks)
		}
	}
}

// checkReasons enforces the contract that every value set has a reason.
func checkReasons(t *testing.T, r *sdk.Recommendation) {
	t.Helper()
	pairs := []struct {
		set    bool
		reason string
		name   string
	}{
		{r.Sandbox != "", r.SandboxReason, "sandbox"}, {r.Image != "", r.ImageReason, "image"},
		{r.TimeoutSeconds != 0, r.TimeoutReason, "timeout"}, {r.MemoryBytes != 0, r.MemoryReason, "memory"},
		{r.Network != "", r.NetworkReason, "network"}, {r.GPUs != "", r.GPUsReason, "gpus"},
	}
	for _, p := range pairs {
		if p.set && p.reason == "" {
			t.Errorf("%s set without a reason", p.name)
		}
	}
}
