//go:build !wasip1

package sdk_test

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// A planner suggests how to run a command before it runs: risks to show
// the user, a recommendation (each value with its reason), a cheap smoke
// variant of the command, the frameworks it uses. It gets the command, the
// script's text when runbox could read it, facts about the host and a
// summary of similar past runs. The host merges every planner's answer:
// risks and notes concatenated, frameworks unioned, each recommendation
// field and the smoke command from the highest-priority plugin that set it.
func ExamplePlugin_planner() {
	p := sdk.Plugin{
		Manifest: sdk.Manifest{Name: "myframework-planner", Version: "0.1.0", Frameworks: []string{"myframework"}},
		Plan: func(in sdk.PlanInput) (sdk.PlanOutput, error) {
			var out sdk.PlanOutput
			if !strings.Contains(in.ScriptText, "import myframework") {
				return out, nil // not ours: an empty plan
			}
			out.Frameworks = []string{"myframework"}
			out.Recommendation = &sdk.Recommendation{
				TimeoutSeconds: 3600,
				TimeoutReason:  "myframework jobs usually finish within an hour",
			}
			if len(in.Host.GPUs) == 0 {
				out.Risks = append(out.Risks, sdk.Risk{
					Severity: sdk.SeverityHigh,
					Code:     "no-gpu",
					Message:  "myframework needs a GPU and this host has none",
				})
			}
			if e := in.Experience; e != nil && e.FailureCodes[sdk.CodeCUDAOOM] > 0 {
				out.Notes = append(out.Notes, "earlier runs of this command ran out of GPU memory")
			}
			if strings.Contains(in.ScriptText, "--dry-run") {
				out.Smoke = &sdk.Smoke{
					Command: append(append([]string{}, in.Command...), "--dry-run"),
					Flag:    "--dry-run",
					Reason:  "the script defines --dry-run",
				}
			}
			return out, nil
		},
	}

	// What runbox_plan receives.
	in := `{"command":["python","train.py"],"script_path":"train.py",` +
		`"script_text":"import myframework\nparser.add_argument('--dry-run')\n",` +
		`"host":{"os":"linux","arch":"amd64","cpus":16,"docker_available":true},` +
		`"experience":{"runs":3,"succeeded":2,"failed":1,"failure_codes":{"CUDA_OOM":1}}}`
	var pi sdk.PlanInput
	decode(in, &pi)
	out, err := p.Plan(pi)
	if err != nil {
		panic(err)
	}
	show(out) // the result in runbox_plan's envelope
	// Output:
	// {"risks":[{"severity":"high","code":"no-gpu","message":"myframework needs a GPU and this host has none"}],"recommendation":{"timeout_seconds":3600,"timeout_reason":"myframework jobs usually finish within an hour"},"smoke":{"command":["python","train.py","--dry-run"],"flag":"--dry-run","reason":"the script defines --dry-run"},"frameworks":["myframework"],"notes":["earlier runs of this command ran out of GPU memory"]}
}
