package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/internal/printable"
)

// PlanCmd is `runbox plan`.
type PlanCmd struct {
	SpecFlags
	Task    string   `help:"What the command is meant to do (helps the planner)." placeholder:"TEXT"`
	Script  string   `help:"The script the command runs, when runbox cannot tell." placeholder:"PATH"`
	Command []string `arg:"" optional:"" passthrough:"" help:"The command, after --." placeholder:"CMD"`
}

// Run makes a plan.
func (c *PlanCmd) Run(ctx context.Context, a *App) error {
	cmd, err := commandArgs(c.Command, "plan")
	if err != nil {
		return err
	}
	req, err := c.request(cmd)
	if err != nil {
		return err
	}
	req.TaskDescription, req.ScriptPath = c.Task, c.Script
	p, err := a.client().Plan(ctx, req)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(p)
	}
	printPlan(p)
	return nil
}

func printPlan(p *api.Plan) {
	w := tabwriter.NewWriter(shown(), 0, 4, 2, ' ', 0)
	fmt.Fprintf(w, "plan:\t%s\n", p.ID)
	fmt.Fprintf(w, "command:\t%s\n", printable.Command(p.Command))
	if p.ScriptPath != "" {
		fmt.Fprintf(w, "script:\t%s\n", p.ScriptPath)
	}
	fmt.Fprintf(w, "sandbox:\t%s — %s\n", p.Sandbox, p.SandboxReason)
	r := p.Result
	if len(r.Frameworks) > 0 {
		fmt.Fprintf(w, "frameworks:\t%s\n", strings.Join(r.Frameworks, ", "))
	}
	if rec := r.Recommendation; rec != nil {
		if p.Spec.Image != "" {
			fmt.Fprintf(w, "image:\t%s — %s\n", p.Spec.Image, rec.ImageReason)
		}
		if p.Spec.Timeout > 0 {
			fmt.Fprintf(w, "timeout:\t%s — %s\n", p.Spec.Timeout, rec.TimeoutReason)
		}
		if p.Spec.Limits.MemoryBytes > 0 {
			fmt.Fprintf(w, "memory:\t%s — %s\n", humanBytes(uint64(p.Spec.Limits.MemoryBytes)), rec.MemoryReason)
		}
		if rec.Network != "" {
			fmt.Fprintf(w, "network:\t%s — %s\n", rec.Network, rec.NetworkReason)
		}
		if rec.GPUs != "" {
			fmt.Fprintf(w, "gpus:\t%s — %s\n", rec.GPUs, rec.GPUsReason)
		}
	}
	printIsolation(w, p.Isolation)
	printAllowNet(w, p) // allownet.go
	if s := r.Smoke; s != nil {
		fmt.Fprintf(w, "smoke test:\t%s (%s)\n", printable.Command(s.Command), s.Reason)
	} else {
		fmt.Fprintf(w, "smoke test:\tnone found\n")
	}
	if len(r.Risks) == 0 {
		fmt.Fprintf(w, "risks:\tnone found\n")
	}
	for i, k := range r.Risks {
		label := ""
		if i == 0 {
			label = "risks:"
		}
		fmt.Fprintf(w, "%s\t[%s] %s", label, k.Severity, k.Message)
		if k.Evidence != "" {
			fmt.Fprintf(w, " (%s)", k.Evidence)
		}
		fmt.Fprintln(w)
	}
	for i, n := range r.Notes {
		label := ""
		if i == 0 {
			label = "notes:"
		}
		fmt.Fprintf(w, "%s\t%s\n", label, n)
	}
	if e := p.Experience; e != nil {
		fmt.Fprintf(w, "experience:\t%s\n", e.Counts())
		for _, c := range e.Changes { // from the records of what ran
			fmt.Fprintf(w, "\t%s\n", c)
		}
	}
	w.Flush()
	fmt.Printf("\nrun it: runbox exec %s", p.ID)
	if r.Smoke != nil {
		fmt.Printf("   (smoke test first: runbox exec --smoke %s)", p.ID)
	}
	fmt.Println()
}

// ExecCmd is `runbox exec`.
type ExecCmd struct {
	Plan   string `arg:"" help:"The plan: its id or a unique prefix of it, or @last for the newest plan (@last~1 the one before it)." placeholder:"PLAN"`
	Smoke  bool   `help:"Run the plan's smoke command first; the full run starts only if it passes."`
	Detach bool   `help:"Start the run and print its id instead of streaming it." short:"d"`
	IsolateFlags
}

// Run executes a plan.
func (c *ExecCmd) Run(ctx context.Context, a *App) error {
	req := api.RunRequest{
		PlanID: c.Plan, Smoke: c.Smoke, ClientEnv: os.Environ(),
		User: fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
	}
	if err := c.IsolateFlags.apply(&req); err != nil {
		return err
	}
	return a.startRun(ctx, req, c.Detach)
}

// RetryCmd is `runbox retry`.
type RetryCmd struct {
	ID      string        `arg:"" name:"run" help:"${run_help}" placeholder:"RUN"`
	Env     []string      `help:"Add or override an environment variable (KEY=VALUE). Repeatable." short:"e"`
	Timeout time.Duration `help:"A new timeout." placeholder:"DUR"`
	Memory  string        `help:"A new memory limit, e.g. 8g." placeholder:"SIZE"`
	Detach  bool          `help:"Start the retry and print its id." short:"d"`
}

// Run retries a run.
func (c *RetryCmd) Run(ctx context.Context, a *App) error {
	f := SpecFlags{Env: c.Env, Memory: c.Memory}
	req, err := f.request(nil)
	if err != nil {
		return err
	}
	req.Workdir, req.Sandbox, req.Grace = "", "", 0
	req.Timeout = api.Duration(c.Timeout)
	if c.Detach {
		run, err := a.client().Retry(ctx, c.ID, req)
		if err != nil {
			return friendly(err)
		}
		return a.printRunID(run)
	}
	return a.attach(ctx, func(ctx context.Context, fn func(client.Frame) error) (json.RawMessage, error) {
		return a.client().AttachRetry(ctx, c.ID, req, fn)
	})
}

// jsonLines writes log frames as JSON lines for `logs --json`.
type jsonLines struct {
	enc *json.Encoder
	dec map[uint8]*client.TextDecoder
}

func newJSONLines() *jsonLines {
	return &jsonLines{enc: json.NewEncoder(os.Stdout), dec: map[uint8]*client.TextDecoder{}}
}

func (j *jsonLines) write(f client.Frame) error {
	d := j.dec[f.Stream]
	if d == nil {
		d = &client.TextDecoder{}
		j.dec[f.Stream] = d
	}
	return j.enc.Encode(struct {
		Stream string    `json:"stream"`
		Time   time.Time `json:"time"`
		Text   string    `json:"text"`
	}{client.Stream(f.Stream).String(), f.Time, string(d.Decode(f.Data))})
}
