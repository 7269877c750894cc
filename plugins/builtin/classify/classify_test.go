package classify

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

// Every code in DESIGN §4 is produced by at least one fixture. TIMEOUT,
// STALLED, CANCELLED, SMOKE_FAILED and SANDBOX_ERROR cannot come from output
// text: their fixtures set the input facts (timed_out, stalled, cancelled,
// smoke, sandbox_error).
func TestEveryCodeProduced(t *testing.T) {
	seen := map[string]bool{}
	for _, f := range loadFixtures(t) {
		seen[Classify(f.in).Code] = true
	}
	for _, c := range sdk.Codes {
		if !seen[c] {
			t.Errorf("no fixture produces %s", c)
		}
	}
}

func TestPrecedence(t *testing.T) {
	tb := func(frames, exc string) string {
		return "Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    " + frames + "\n" + exc + "\n"
	}
	cases := []struct {
		name string
		in   sdk.ClassifyInput
		want string
	}{
		{"warning mentioning memory loses to the traceback", sdk.ClassifyInput{ExitCode: 1,
			StderrTail: "x.py:3: UserWarning: low GPU memory, CUDA out of memory may follow\n  warnings.warn(\n" + tb("d[k]", "KeyError: 'k'")}, sdk.CodePythonException},
		{"WARNING log line loses to the traceback", sdk.ClassifyInput{ExitCode: 1,
			StderrTail: "WARNING: out of memory on host, retrying\n" + tb("open(p)", "FileNotFoundError: [Errno 2] No such file or directory: 'a.txt'")}, sdk.CodeFileNotFound},
		{"warning alone beats bare exit status 1", sdk.ClassifyInput{ExitCode: 1,
			StderrTail: "2024-01-01 10:00:00 WARNING CUDA out of memory. Tried to allocate 2.00 GiB\n"}, sdk.CodeCUDAOOM},
		{"nested root beats wrapper", sdk.ClassifyInput{ExitCode: 1,
			StderrTail: tb("import a", "ModuleNotFoundError: No module named 'a'") + "\nThe above exception was the direct cause of the following exception:\n\n" + tb("load()", "RuntimeError: plugin failed to load")}, sdk.CodeModuleNotFound},
		{"child error beats launcher wrapper", sdk.ClassifyInput{ExitCode: 1,
			StderrTail: "[rank0]: " + strings.ReplaceAll(tb("x = y @ w", "RuntimeError: mat1 and mat2 shapes cannot be multiplied (8x3 and 4x2)"), "\n", "\n[rank0]: ") + "\n" + tb("main()", "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:")}, sdk.CodeShapeMismatch},
		{"text beats exit status", sdk.ClassifyInput{ExitCode: 137, StderrTail: tb("a = np.ones(n)", "MemoryError")}, sdk.CodeOOMKilled},
		{"exit status beats generic exception", sdk.ClassifyInput{ExitCode: 139, StderrTail: tb("f()", "ValueError: bad")}, sdk.CodeSegfault},
		{"sandbox OOM fact beats text", sdk.ClassifyInput{ExitCode: 137, OOMKilled: true, StderrTail: tb("f()", "ValueError: bad")}, sdk.CodeOOMKilled},
		{"timeout fact beats text", sdk.ClassifyInput{ExitCode: 143, TimedOut: true, StderrTail: "Terminated\n"}, sdk.CodeTimeout},
		{"cancel beats smoke", sdk.ClassifyInput{ExitCode: 143, Cancelled: true, Smoke: true}, sdk.CodeCancelled},
		{"Killed alone is the OOM killer", sdk.ClassifyInput{ExitCode: 137, StderrTail: "Killed\n"}, sdk.CodeOOMKilled},
		{"Killed after a restart is KILLED", sdk.ClassifyInput{ExitCode: 137, StderrTail: "+ supervisorctl restart all\nKilled\n"}, sdk.CodeKilled},
		{"137 with OOMKilled false is KILLED", sdk.ClassifyInput{ExitCode: 137, StdoutTail: "\"OOMKilled\": false,\n\"ExitCode\": 137,\n"}, sdk.CodeKilled},
		{"Killed near the memory limit is OOM", sdk.ClassifyInput{ExitCode: 137, StderrTail: "Killed\n", PeakRSSBytes: 950, Limits: sdk.Limits{MemoryBytes: 1000}}, sdk.CodeOOMKilled},
		{"stdout traceback counts", sdk.ClassifyInput{ExitCode: 1, StdoutTail: tb("import yaml", "ModuleNotFoundError: No module named 'yaml'")}, sdk.CodeModuleNotFound},
		{"a glog CHECK failure is an abort", sdk.ClassifyInput{ExitCode: 134, StderrTail: "F1125 10:00:00.123 42 conv.cc:88] Check failed: n > 0 \n*** Check failure stack trace: ***\n"}, sdk.CodeAborted},
		{"a program's own 'check failed' is not", sdk.ClassifyInput{ExitCode: 1, StderrTail: "smoke check failed: data dir missing\n"}, sdk.CodeNonzeroExit},
		{"nothing known", sdk.ClassifyInput{ExitCode: 1}, sdk.CodeNonzeroExit},
		{"exit 0 still answers", sdk.ClassifyInput{}, sdk.CodeNonzeroExit},
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

func TestSmokeWrapsCause(t *testing.T) {
	got := Classify(sdk.ClassifyInput{ExitCode: 2, Smoke: true, StderrTail: "usage: t.py [-h] --data DATA\nt.py: error: the following arguments are required: --data\n"})
	if got.Code != sdk.CodeSmokeFailed || got.Details["cause"] != sdk.CodeArgumentError || got.Details["argument"] != "--data" {
		t.Fatalf("got %+v", got)
	}
	if !strings.Contains(got.Message, "--data") {
		t.Errorf("message lacks the cause: %s", got.Message)
	}
}

func TestNormalize(t *testing.T) {
	cases := []struct{ raw, text, key string }{
		{"[rank3]:   File \"a.py\", line 1", "File \"a.py\", line 1", "rank3"},
		{"[default0]:Traceback (most recent call last):", "Traceback (most recent call last):", "default0"},
		{"> > KeyError: 'x'", "KeyError: 'x'", ""},
		{"2024-01-02 03:04:05,678 - root - ERROR - boom", "boom", ""},
		{"2024-01-02T03:04:05.123456Z ##[error]Process failed", "Process failed", ""},
		{"[2024-04-04 09:00:01,200][__main__][ERROR] - ImportError: x", "ImportError: x", ""},
		{"E0612 10:03:11.806000 140 torch/distributed/elastic/multiprocessing/api.py:833] failed", "failed", ""},
		{"2023-05-10 09:12:44.120331: W tensorflow/core/x.cc:485] Allocator ran out", "Allocator ran out", ""},
		{"\x1b[1;31mRuntimeError\x1b[0m: boom", "RuntimeError: boom", ""},
		{"[31mValueError[0m: boom", "ValueError: boom", ""},
		{"(RayTrainWorker pid=123, ip=10.0.0.1) KeyError: 'a'", "KeyError: 'a'", "RayTrainWorker pid=123, ip=10.0.0.1"},
		{"[1,0]<stderr>:Traceback (most recent call last):", "Traceback (most recent call last):", "1,0"},
		{"trainer-1  | MemoryError", "MemoryError", "trainer-1"},
		{"50%|█████     | 5/10\r100%|██████████| 10/10", "100%|██████████| 10/10", ""},
		{"WARNING:root:disk almost full", "disk almost full", ""},
		{"12:00:01 | INFO | starting", "starting", ""},
	}
	for _, c := range cases {
		l, _ := normalize(c.raw)
		if l.text != c.text || l.key != c.key {
			t.Errorf("normalize(%q) = %q key %q, want %q key %q", c.raw, l.text, l.key, c.text, c.key)
		}
	}
}

func TestDeterministic(t *testing.T) {
	for _, f := range loadFixtures(t) {
		a, b := Classify(f.in), Classify(f.in)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two calls differ", f.name)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, fx := range loadFixtures(f) {
		f.Add(fx.in.StdoutTail, fx.in.StderrTail, fx.in.ExitCode, fx.in.Signal)
	}
	f.Add("\r\r\x1b[", "[rank0]:\x1b]8;;\x07Traceback (most recent call last)", -300, "SIG")
	f.Fuzz(func(t *testing.T, stdout, stderr string, code int, sig string) {
		got := Classify(sdk.ClassifyInput{StdoutTail: stdout, StderrTail: stderr, ExitCode: code, Signal: sig})
		if got == nil || !sdk.ValidCode(got.Code) {
			t.Fatalf("bad answer %+v", got)
		}
		if got.Confidence < 0 || got.Confidence > 1 {
			t.Fatalf("confidence %v", got.Confidence)
		}
	})
}

// benchTail builds a typical 64 KiB tail: progress bars, log lines and
// warnings, then a CUDA OOM traceback.
func benchTail() string {
	var b strings.Builder
	for i := 0; b.Len() < 60<<10; i++ {
		n := strconv.Itoa(i)
		switch i % 5 {
		case 0:
			b.WriteString("Epoch 3:  45%|████▌     | " + n + "/1000 [01:10<01:26,  6.38it/s, loss=0.4123, lr=3e-4]\r")
			b.WriteString("Epoch 3:  46%|████▌     | " + n + "/1000 [01:12<01:24,  6.38it/s, loss=0.4120, lr=3e-4]\n")
		case 1:
			b.WriteString("2024-05-01 10:00:00,123 - INFO - trainer - step " + n + " loss 0.4120 grad_norm 1.02 throughput 812 tok/s\n")
		case 2:
			b.WriteString("[rank0]:[W socket.cpp:464] [c10d] The server socket has failed to bind to [::]:" + n + " (errno: 98 - Address already in use).\n")
		case 3:
			b.WriteString("{'loss': 0.4123, 'learning_rate': 0.0003, 'epoch': 3.0, 'step': " + n + "}\n")
		case 4:
			b.WriteString("/opt/conda/lib/python3.11/site-packages/transformers/trainer.py:" + n + ": FutureWarning: `tokenizer` is deprecated and will be removed in version 5.0.0\n")
		}
	}
	b.WriteString(`Traceback (most recent call last):
  File "/home/user/proj/train.py", line 88, in <module>
    main()
  File "/opt/conda/lib/python3.11/site-packages/torch/_tensor.py", line 522, in backward
    torch.autograd.backward(
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.12 GiB is free.
`)
	return b.String()
}

func BenchmarkClassify(b *testing.B) {
	in := sdk.ClassifyInput{ExitCode: 1, StderrTail: benchTail()}
	b.SetBytes(int64(len(in.StderrTail)))
	b.ReportAllocs()
	for b.Loop() {
		if Classify(in).Code != sdk.CodeCUDAOOM {
			b.Fatal("wrong code")
		}
	}
}

// A bare SIGKILL is taken for the OOM killer with a confidence that says
// it is an inference, and the answer says how to confirm it.
func TestBareSIGKILLIsLowConfidenceOOM(t *testing.T) {
	for _, in := range []sdk.ClassifyInput{
		{ExitCode: 137},
		{ExitCode: 137, Signal: "SIGKILL", StderrTail: "Killed\n"},
		{ExitCode: 1, StderrTail: "WARNING:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 1) of binary: python\n"},
	} {
		f := Classify(in)
		if f.Code != sdk.CodeOOMKilled || f.Confidence > 0.6 || f.Confidence <= 0 {
			t.Errorf("%+v: %s at confidence %v, want OOM_KILLED at <= 0.6", in, f.Code, f.Confidence)
		}
		if !strings.Contains(strings.Join(f.Suggestions, " "), "dmesg") || !strings.Contains(strings.Join(f.Suggestions, " "), "journalctl -k") {
			t.Errorf("suggestions do not say how to confirm: %q", f.Suggestions)
		}
	}
	// The measured peak and the limit are in the answer when known.
	f := Classify(sdk.ClassifyInput{ExitCode: 137, PeakRSSBytes: 950 << 20, Limits: sdk.Limits{MemoryBytes: 1 << 30}})
	if f.Code != sdk.CodeOOMKilled || f.Details["peak_rss"] == "" || f.Details["limit"] == "" {
		t.Errorf("near the limit: %s %v", f.Code, f.Details)
	}
}

// A SIGKILL with evidence against the OOM killer — the sandbox looked at
// the cgroup's OOM events and found none, or the run never grew — is
// KILLED, and says who could have sent it (issue #24: `kill -9 $$` with 13
// MiB used was reported as OOM_KILLED). Without that evidence (a posted
// log) it stays the OOM killer's inference.
func TestSIGKILLWithoutOOMEvidenceIsKilled(t *testing.T) {
	for name, in := range map[string]sdk.ClassifyInput{
		"no oom event":        {ExitCode: 137, Signal: "SIGKILL", OOMChecked: true, PeakRSSBytes: 13 << 20},
		"no oom event, shell": {ExitCode: 137, Signal: "SIGKILL", OOMChecked: true, StderrTail: "bash: line 1:  4242 Killed                  python train.py\n"},
		"small peak":          {ExitCode: 137, Signal: "SIGKILL", PeakRSSBytes: 13 << 20},
		"far from the limit":  {ExitCode: 137, PeakRSSBytes: 1 << 30, Limits: sdk.Limits{MemoryBytes: 8 << 30}},
	} {
		f := Classify(in)
		if f.Code != sdk.CodeKilled {
			t.Errorf("%s: %s (%s), want KILLED", name, f.Code, f.Message)
			continue
		}
		if !strings.Contains(strings.Join(f.Suggestions, " "), "kill -9") {
			t.Errorf("%s: suggestions do not name who could have sent it: %q", name, f.Suggestions)
		}
	}
	// Evidence of memory wins over the absence of an OOM event: near the
	// limit it is still the OOM killer.
	if f := Classify(sdk.ClassifyInput{ExitCode: 137, Signal: "SIGKILL", PeakRSSBytes: 950 << 20, Limits: sdk.Limits{MemoryBytes: 1 << 30}}); f.Code != sdk.CodeOOMKilled {
		t.Errorf("near the limit: %s, want OOM_KILLED", f.Code)
	}
}

// MemoryError is a refused allocation, not a kill: the answer says so and
// does not tell the user to compare the (small) peak with the limit.
func TestMemoryErrorWording(t *testing.T) {
	f := Classify(sdk.ClassifyInput{ExitCode: 1, PeakRSSBytes: 40 << 20, Limits: sdk.Limits{MemoryBytes: 8 << 30},
		StderrTail: "Traceback (most recent call last):\n  File \"a.py\", line 2, in <module>\n    x = np.zeros((10**6, 10**6))\nMemoryError\n"})
	if f.Code != sdk.CodeOOMKilled || !strings.Contains(f.Message, "refused") {
		t.Fatalf("%s: %s", f.Code, f.Message)
	}
	all := strings.Join(f.Suggestions, " ")
	if strings.Contains(all, "measured peak was") || !strings.Contains(all, "elements") {
		t.Errorf("suggestions: %q", f.Suggestions)
	}
}

// A sandbox's OOM kill under a memory limit is the limit's, not the
// host's, and the suggestion names the flag that raises it.
func TestOOMKillAtTheLimitSaysSo(t *testing.T) {
	for _, tt := range []struct {
		limit      int64
		says, sugg string
	}{
		{50 << 20, "killed at its memory limit", "Raise the run's memory limit (--memory; it was 50.00 MiB; the measured peak was 55.00 MiB)"},
		{0, "killed for running out of host memory", "The run's measured peak was 55.00 MiB"},
	} {
		f := Classify(sdk.ClassifyInput{ExitCode: 137, OOMKilled: true, PeakRSSBytes: 55 << 20, Limits: sdk.Limits{MemoryBytes: tt.limit}})
		if f.Code != sdk.CodeOOMKilled || !strings.Contains(f.Message, tt.says) || len(f.Suggestions) == 0 || !strings.HasPrefix(f.Suggestions[0], tt.sugg) {
			t.Errorf("limit %d: %s %q %q", tt.limit, f.Code, f.Message, f.Suggestions)
		}
	}
}
