package classify

import (
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// Shapes of real output whose structure, not wording, hid the cause
// (issue #15): a wrapper that only relays a status, a traceback whose
// line breaks were lost or that was cut before its exception line, an
// exception message that quotes another traceback, and logger prefixes
// that a frame hides behind.
func TestStructureShapes(t *testing.T) {
	cases := []struct {
		name, tail string
		want       string
		detail     [2]string // a detail the failure must carry
	}{
		{"subprocess wrapper alone: the child's status, nothing more",
			"subprocess.CalledProcessError: Command '['python', 'train.py']' returned non-zero exit status 3.\n",
			sdk.CodeNonzeroExit, [2]string{"child_exit_code", "3"}},
		{"subprocess wrapper wrapped by a narrow terminal",
			"CalledProcessError: Command '['python3', 'fit.py', \n'--cfg=a.toml']' returned non-zero exit \nstatus 2.\n",
			sdk.CodeNonzeroExit, [2]string{"child_exit_code", "2"}},
		{"subprocess wrapper under the child's own error",
			"Traceback (most recent call last):\n  File \"fit.py\", line 9, in <module>\n    cfg['lr']\nKeyError: 'lr'\nsubprocess.CalledProcessError: Command '['python3', 'fit.py']' returned non-zero exit status 1.\n",
			sdk.CodePythonException, [2]string{}},
		{"exception message quoting a worker's traceback",
			"Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    batch = next(it)\nValueError: 'Traceback (most recent call last):\\n  File \"w.py\", line 7, in loop\\nValueError: bad row\\n'\nshutting down\n",
			sdk.CodePythonException, [2]string{"inner_exception", "ValueError: bad row"}},
		{"traceback on one line, newlines lost",
			"Traceback (most recent call last):   File \"run.py\", line 3, in <module>     import model   File \"model.py\", line 1, in <module>     import einops ModuleNotFoundError: No module named 'einops'\n",
			sdk.CodeModuleNotFound, [2]string{"module", "einops"}},
		{"one-line traceback inside fences",
			"```Traceback (most recent call last):   File \"a.py\", line 2, in <module>     d = {}['k'] KeyError: 'k'```\n",
			sdk.CodePythonException, [2]string{"exception", "KeyError"}},
		{"error glued to a fence",
			"```RuntimeError: CUDA error: an illegal memory access was encountered```\n",
			sdk.CodeGPUError, [2]string{}},
		{"cut inside NCCL setup frames",
			"  File \"/x/site-packages/torch/distributed/distributed_c10d.py\", line 90, in new_group\n    pg = ProcessGroupNCCL(store, rank, size)\n",
			sdk.CodeDistributedError, [2]string{"cut", "traceback"}},
		{"Jupyter header naming the exception, cut inside urllib",
			"ConnectionResetError                      Traceback (most recent call last)\nFile ~/env/lib/python3.11/urllib/request.py:1348, in AbstractHTTPHandler.do_open(self, http_class, req)\n-> 1348     h.request(req.get_method(), req.selector)\n",
			sdk.CodeNetworkError, [2]string{"exception", "ConnectionResetError"}},
		{"cut inside the program's own frames says nothing more",
			"Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n    loss = step(batch)\n",
			sdk.CodeNonzeroExit, [2]string{}},
		{"vLLM worker prefix (month-day time, source location) over cut frames",
			"(VllmWorkerProcess pid=7) ERROR 12-25 01:10:28 multiproc_worker_utils.py:229]   File \"/x/vllm/distributed/device_communicators/pynccl.py\", line 99, in __init__\n(VllmWorkerProcess pid=7) ERROR 12-25 01:10:28 multiproc_worker_utils.py:229]     self.comm = self.nccl.ncclCommInitRank(\n",
			sdk.CodeDistributedError, [2]string{"cut", "traceback"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: c.tail})
			if f.Code != c.want {
				t.Fatalf("code = %s, want %s (%s)", f.Code, c.want, f.Message)
			}
			if k := c.detail[0]; k != "" && f.Details[k] != c.detail[1] {
				t.Errorf("detail %s = %q, want %q (%v)", k, f.Details[k], c.detail[1], f.Details)
			}
			checkFailure(t, f)
		})
	}
}

// A subprocess wrapper's suggestion is the child's own command line, read
// back from Python's list; a list cut by a narrow paste gives none.
func TestChildCommand(t *testing.T) {
	for _, c := range []struct{ msg, want string }{
		{"Command '['python', 'train.py', '--bs', '8']' returned non-zero exit status 1.", "python train.py --bs 8"},
		{`Command '['C:\\py\\python.exe', 'a b.py']' returned non-zero exit status 2.`, `C:\py\python.exe 'a b.py'`},
		{"Command '['python3', 'train_network.py', ", ""},
		{"Command 'make all' returned non-zero exit status 2.", ""},
	} {
		if got := childCommand(c.msg); got != c.want {
			t.Errorf("childCommand(%q) = %q, want %q", c.msg, got, c.want)
		}
	}
	f := Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: "subprocess.CalledProcessError: Command '['python', 'train.py', '--bs', '8']' returned non-zero exit status 1.\n"})
	if f.Details["child_command"] != "python train.py --bs 8" || !strings.Contains(f.Suggestions[0], "`python train.py --bs 8`") {
		t.Errorf("%v %q", f.Details, f.Suggestions)
	}
}

// A re-raised worker error quoting the worker's traceback is explained,
// and advised on, by the error the quote ends in.
func TestQuotedTracebackRoot(t *testing.T) {
	tail := "Traceback (most recent call last):\n  File \"train.py\", line 40, in <module>\n    batch = next(it)\n" +
		"KeyError: 'Traceback (most recent call last):\\n  File \"w.py\", line 7, in loop\\n    x = rows[i]\\nIndexError: list index out of range\\n'\n"
	f := Classify(sdk.ClassifyInput{ExitCode: 1, StderrTail: tail})
	if f.Code != sdk.CodePythonException || f.Details["inner_exception"] != "IndexError: list index out of range" {
		t.Fatalf("%s %v: %s", f.Code, f.Details, f.Message)
	}
	if len(f.Suggestions) == 0 || !strings.Contains(f.Suggestions[0], "index was out of range") {
		t.Errorf("suggestions %q do not advise on the IndexError", f.Suggestions)
	}
}
