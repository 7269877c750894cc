package classify

import (
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// nanLossFromProgress makes a loss that progress saw go NaN or infinite
// the failure when the output gave nothing better than the exit status:
// the tail may no longer show the "loss: nan" lines (a run that went on
// for hours after, then died), but the progress state keeps the last
// value. It never overrides a specific code or a fact runbox knows
// (classify returns those before it is asked). It lived in the host
// (PluginJudge) until issue #24; here live runs, `runbox analyze` and
// `make eval` all get it, since all three ask this classifier.
func nanLossFromProgress(in *sdk.ClassifyInput, f *sdk.Failure) *sdk.Failure {
	if f.Code != sdk.CodeNonzeroExit || in.Progress == nil {
		return f
	}
	keys := make([]string, 0, len(in.Progress.Metrics))
	for k, v := range in.Progress.Metrics {
		if (math.IsNaN(v) || math.IsInf(v, 0)) && strings.Contains(strings.ToLower(k), "loss") {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return f
	}
	sort.Strings(keys)
	ev := make([]string, 0, len(keys))
	for _, k := range keys {
		ev = append(ev, "progress: "+k+"="+sdk.FormatMetric(in.Progress.Metrics[k])+" at step "+strconv.FormatInt(in.Progress.Step, 10))
	}
	return &sdk.Failure{
		Code:    sdk.CodeNaNLoss,
		Message: "The run ended (exit status " + strconv.Itoa(in.ExitCode) + ") after its " + keys[0] + " became " + sdk.FormatMetric(in.Progress.Metrics[keys[0]]) + ".",
		Suggestions: []string{
			"Lower the learning rate, or add warmup.",
			"Clip gradients (e.g. torch.nn.utils.clip_grad_norm_).",
			"With fp16, use a loss scaler or bf16; check the inputs for NaN or Inf.",
		},
		Evidence:   ev,
		Confidence: 0.6,
		Details:    map[string]string{"source": "progress", "metric": keys[0]},
	}
}
