package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// A live run and `runbox analyze` explain the same output through one
// explanation session (plugins/explain): the same log, printed by a real
// run and analyzed from a file, gives the same failure and the same final
// progress (issue #24: a NaN-loss rule once lived only on the live path).
func TestLiveRunAndAnalyzeAgree(t *testing.T) {
	logs := map[string]string{
		"nan loss": "Epoch 1/5\n100/100 [==============================] - 3s 30ms/step - loss: 0.6931 - accuracy: 0.5012\n" +
			"Epoch 2/5\n100/100 [==============================] - 3s 30ms/step - loss: nan - accuracy: 0.1000\n" +
			"stopping: the loss is not finite\n",
		"cuda oom": "step 120/1000 loss=2.3141 lr=0.0003\nstep 130/1000 loss=2.2977 lr=0.0003\n" +
			"Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    out = model(x)\n" +
			"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.02 GiB is free.\n",
	}
	e := newEnv(t)
	// Precondition: the daemon's progress plugin is compiled. A live run
	// bounds its last flush (2 s) so that a plugin still compiling on a
	// first run ever never holds up the run's end, and its progress is
	// then unknown; analyze waits for the plugin instead. That bound is
	// the live path's on purpose, so the comparison starts warm: runs
	// of a progress line until one shows progress (bounded).
	for i := 0; ; i++ {
		id := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "echo 'step 1/2 loss=0.5'"))
		e.run("", "wait", id)
		if e.getRun(id).Progress != nil {
			break
		}
		if i == 10 {
			t.Fatal("the progress plugin never answered a live run")
		}
	}
	for name, text := range logs {
		t.Run(name, func(t *testing.T) {
			logf := e.write(strings.ReplaceAll(name, " ", "_")+".log", text)
			id := strings.TrimSpace(e.must("run", "-d", "--", "sh", "-c", "cat "+logf+" >&2; exit 1"))
			e.run("", "wait", id)
			live := e.getRun(id)
			r := e.run("", "analyze", "--json", "--exit-code", "1", logf)
			if r.code != 0 {
				t.Fatalf("analyze: exit %d: %s", r.code, r.stderr)
			}
			var a api.Analysis
			if err := json.Unmarshal([]byte(r.stdout), &a); err != nil {
				t.Fatalf("analyze output %q: %v", r.stdout, err)
			}
			if live.Failure == nil || a.Failure == nil {
				t.Fatalf("failure live %+v, analyze %+v", live.Failure, a.Failure)
			}
			if live.Failure.Code != a.Failure.Code || live.Failure.Message != a.Failure.Message ||
				!reflect.DeepEqual(live.Failure.Evidence, a.Failure.Evidence) {
				t.Errorf("failure differs:\nlive    %+v\nanalyze %+v", live.Failure, a.Failure)
			}
			lp, _ := json.Marshal(live.Progress)
			ap, _ := json.Marshal(a.Progress)
			if live.Progress == nil || string(lp) != string(ap) {
				t.Errorf("final progress differs:\nlive    %s\nanalyze %s", lp, ap)
			}
			t.Logf("%s: %s; progress %s", name, a.Failure.Code, ap)
		})
	}
}
