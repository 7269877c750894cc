package classify

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// Shapes of real output (issue #15) that each rule generalises: the
// wording differs from the common one, or a wrapper hides the cause.
func TestRealShapes(t *testing.T) {
	cases := []struct {
		name string
		in   sdk.ClassifyInput
		want string
	}{
		{"cmd.exe not recognized", sdk.ClassifyInput{ExitCode: 9009, StderrTail: "'python' is not recognized as an internal or external command,\noperable program or batch file.\n"}, sdk.CodeCommandNotFound},
		{"CR overwrote the name", sdk.ClassifyInput{ExitCode: 2, StderrTail: ": command not found\n: command not found\n"}, sdk.CodeScriptError},
		{"CR beats a missing file", sdk.ClassifyInput{ExitCode: 2, StderrTail: "ls: cannot access '*.zip': No such file or directory\n./t: line 12: $'\\r': command not found\n"}, sdk.CodeScriptError},
		{"localised EACCES", sdk.ClassifyInput{ExitCode: 1, StderrTail: "./train.sh: 行 25: /data/x.tfrecord: 权限不够\n"}, sdk.CodePermissionDenied},
		{"clap usage error", sdk.ClassifyInput{ExitCode: 2, StderrTail: "error: The following required arguments were not provided:\n    <INPUT>\n\nUSAGE:\n    grex <INPUT>\n"}, sdk.CodeArgumentError},
		{"Ray actor died lists OOM as a possibility", sdk.ClassifyInput{ExitCode: 1, StderrTail: "ray.exceptions.RayActorError: The actor died unexpectedly before finishing this task.\nThe actor is dead because its worker process has died. There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage.\n"}, sdk.CodeDistributedError},
		{"anomaly mode names the backward op", sdk.ClassifyInput{ExitCode: 1, StderrTail: "[W python_anomaly_mode.cpp:104] Warning: Error detected in SoftmaxBackward0. Traceback of forward call that caused the error:\n"}, sdk.CodeNaNLoss},
		{"program's own NaN check", sdk.ClassifyInput{ExitCode: 1, StderrTail: "ValueError:Network outputs is NAN! Stop Training\n"}, sdk.CodeNaNLoss},
		{"XLA resource exhausted", sdk.ClassifyInput{ExitCode: 1, StderrTail: "E local_client.cc:672] Execution of replica 0 failed: Resource exhausted: Out of memory while trying to allocate 5520758552 bytes.\n"}, sdk.CodeCUDAOOM},
		{"Metal command buffer without memory", sdk.ClassifyInput{ExitCode: 134, StderrTail: "libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Impacting Interactivity\n"}, sdk.CodeGPUError},
		{"torchrun rank failed, nothing deeper", sdk.ClassifyInput{ExitCode: 1, StderrTail: "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1622990) of binary: /usr/bin/python\n"}, sdk.CodeDistributedError},
		{"torchrun rank failed under the child's error", sdk.ClassifyInput{ExitCode: 1, StderrTail: "Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n    x[k]\nKeyError: 'k'\nERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: 1) of binary: python\n"}, sdk.CodePythonException},
		{"launcher received SIGHUP", sdk.ClassifyInput{ExitCode: 1, StderrTail: "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers\n"}, sdk.CodeTerminated},
		{"a caret under a source line, the SyntaxError line cut", sdk.ClassifyInput{ExitCode: 1, StderrTail: "  File \"main.py\", line 51\n    paint(f'{x[\"a\"]}', end='')\n                 ^\n"}, sdk.CodeSyntaxError},
		{"a caret then the exception names it", sdk.ClassifyInput{ExitCode: 1, StderrTail: "  File \"main.py\", line 3\n    x = [1, 2\n        ^\nKeyError: 'a'\n"}, sdk.CodePythonException},
		{"launcher received SIGINT", sdk.ClassifyInput{ExitCode: 1, StderrTail: "WARNING:torch.distributed.elastic.agent.server.api:Received 2 death signal, shutting down workers\n"}, sdk.CodeInterrupted},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Classify(c.in)
			if got.Code != c.want {
				t.Fatalf("code = %s, want %s (%s)", got.Code, c.want, got.Message)
			}
			checkFailure(t, got)
		})
	}
}

// Suggestions name what the run itself used (issue #15, item 5).
func TestGroundedSuggestions(t *testing.T) {
	oom := "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.2 GiB is free.\n"
	cases := []struct {
		name string
		in   sdk.ClassifyInput
		want string
	}{
		{"batch flag with a space", sdk.ClassifyInput{ExitCode: 1, StderrTail: oom, Command: []string{"python", "train.py", "--batch-size", "64"}}, "`--batch-size 32` instead of 64"},
		{"batch flag with =", sdk.ClassifyInput{ExitCode: 1, StderrTail: oom, Command: []string{"python", "train.py", "--per_device_train_batch_size=8"}}, "`--per_device_train_batch_size 4` instead of 8"},
		{"batch flag in a shell string", sdk.ClassifyInput{ExitCode: 1, StderrTail: oom, Command: []string{"bash", "-c", "python train.py --bs 16 --lr 1e-4"}}, "`--bs 8` instead of 16"},
		{"Hydra override", sdk.ClassifyInput{ExitCode: 1, StderrTail: oom, Command: []string{"python", "train.py", "data.batch_size=128"}}, "`data.batch_size 64` instead of 128"},
		{"host OOM: limit, peak and batch", sdk.ClassifyInput{ExitCode: 137, PeakRSSBytes: 7 << 30, Limits: sdk.Limits{MemoryBytes: 8 << 30}, Command: []string{"python", "t.py", "--batch_size", "32"}}, "the measured peak was 7.00 GiB"},
		{"pip and conda names", sdk.ClassifyInput{ExitCode: 1, StderrTail: "ModuleNotFoundError: No module named 'cv2'\n"}, "conda install -c conda-forge opencv-python"},
		{"a close path in the command", sdk.ClassifyInput{ExitCode: 1, StderrTail: "FileNotFoundError: [Errno 2] No such file or directory: 'data/trian.csv'\n", Command: []string{"python", "t.py", "--train", "data/train.csv"}}, "`data/train.csv`"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Classify(c.in)
			all := f.Message + " | " + strings.Join(f.Suggestions, " | ")
			if !strings.Contains(all, c.want) {
				t.Errorf("%s: no %q in %s", f.Code, c.want, all)
			}
		})
	}
}

// A coreutils "cannot VERB 'PATH': Permission denied" names PATH and is a
// file's access, not a script that is not executable; a shell's
// "./x.sh: Permission denied" is the latter.
func TestPermissionDeniedPath(t *testing.T) {
	for _, c := range []struct {
		tail, path string
		exec       bool
	}{
		{"touch: cannot touch '/data/out/x': Permission denied\n", "/data/out/x", false},
		{"mkdir: cannot create directory ‘/opt/cache’: Permission denied\n", "/opt/cache", false},
		{"cp: cannot create regular file '/usr/local/bin/tool': Permission denied\n", "/usr/local/bin/tool", false},
		{"bash: ./train.sh: Permission denied\n", "./train.sh", true},
	} {
		f := Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: c.tail})
		all := f.Message + " | " + strings.Join(f.Suggestions, " | ")
		if f.Code != sdk.CodePermissionDenied || f.Details["path"] != c.path {
			t.Errorf("%q: %s path %q, want PERMISSION_DENIED path %q", c.tail, f.Code, f.Details["path"], c.path)
		}
		if strings.Contains(all, "chmod +x") != c.exec {
			t.Errorf("%q: says chmod +x: %v, want %v: %s", c.tail, !c.exec, c.exec, all)
		}
	}
}

// COMMAND_NOT_FOUND says "command not found" once (issue #16), whichever
// way it was found.
func TestCommandNotFoundSaysItOnce(t *testing.T) {
	for _, in := range []sdk.ClassifyInput{
		{ExitCode: 127, StderrTail: "bash: fooo: command not found\n"},
		{ExitCode: 127, StderrTail: "zsh: command not found: fooo\n"},
		{ExitCode: 127, Command: []string{"fooo"}},
		{ExitCode: 9009, StderrTail: "'fooo' is not recognized as an internal or external command,\n"},
	} {
		f := Classify(in)
		if f.Code != sdk.CodeCommandNotFound || strings.Count(strings.ToLower(f.Message), "command not found") != 1 {
			t.Errorf("%s: %q", f.Code, f.Message)
		}
	}
}
