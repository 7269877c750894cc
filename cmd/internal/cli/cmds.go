package cli

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/internal/printable"
)

// runHelp is the help of every argument that names a run. The daemon
// resolves the name (store.GetRun), so the API and MCP take the same ones.
const runHelp = "The run: its number from 'runbox ls' (e.g. 42), @last for the newest run (@last~1 the one before it), or its full id or a unique prefix of it."

const sweepHelp = "The sweep: its id from 'runbox sweep ls' or a unique prefix of it, or @last for the newest sweep (@last~1 the one before it)."

// StatusCmd is `runbox status`.
type StatusCmd struct {
	ID string `arg:"" name:"run" help:"${run_help}" placeholder:"RUN"`
}

// Run shows a run.
func (c *StatusCmd) Run(ctx context.Context, a *App) error {
	r, err := a.client().Get(ctx, c.ID)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(r)
	}
	printRun(r, sparklineLine(ctx, a, r)...)
	return nil
}

// extra are more "label:\tvalue" lines (the metric history) shown after
// the progress.
func printRun(r *api.Run, extra ...string) {
	w := tabwriter.NewWriter(shown(), 0, 4, 2, ' ', 0)
	if r.ShortID != "" {
		fmt.Fprintf(w, "run:\t%s (%s)\n", r.ShortID, r.ID)
	} else {
		fmt.Fprintf(w, "run:\t%s\n", r.ID)
	}
	if r.Name != "" {
		fmt.Fprintf(w, "name:\t%s\n", r.Name)
	}
	fmt.Fprintf(w, "state:\t%s\n", r.State)
	if r.Reason != "" && r.Reason != string(r.State) {
		fmt.Fprintf(w, "reason:\t%s\n", r.Reason)
	}
	fmt.Fprintf(w, "command:\t%s\n", printable.Run(r.Spec.Command, r.Spec.Shell))
	fmt.Fprintf(w, "sandbox:\t%s", r.Sandbox)
	if r.SandboxReason != "" {
		fmt.Fprintf(w, " (%s)", r.SandboxReason)
	}
	fmt.Fprintln(w)
	if label, ref := backendRef(r); ref != "" {
		fmt.Fprintf(w, "%s:\t%s\n", label, ref)
	}
	fmt.Fprintf(w, "workdir:\t%s\n", r.Spec.Workdir)
	if r.Sandbox == "process" {
		fmt.Fprintf(w, "isolate:\t%s\n", isolateLine(r.Spec))
	}
	printEgress(w, r) // allownet.go
	if r.ParentRunID != "" {
		fmt.Fprintf(w, "retry of:\t%s (attempt %d)\n", r.ParentRunID, r.Attempt)
	}
	fmt.Fprintf(w, "created:\t%s\n", r.CreatedAt.Local().Format(time.DateTime))
	if r.StartedAt != nil {
		fmt.Fprintf(w, "started:\t%s\n", r.StartedAt.Local().Format(time.DateTime))
	}
	if r.EndedAt != nil {
		fmt.Fprintf(w, "ended:\t%s (%s)\n", r.EndedAt.Local().Format(time.DateTime), runDuration(r))
	}
	if r.Exit == nil && r.State == api.Lost {
		fmt.Fprintf(w, "exit:\tunknown (the run was lost)\n")
	}
	if r.Exit != nil {
		fmt.Fprintf(w, "exit:\t%d", r.Exit.Code)
		if r.Exit.Signal != "" {
			fmt.Fprintf(w, " (%s)", r.Exit.Signal)
		}
		fmt.Fprintln(w)
		if r.Exit.LogDropped > 0 {
			fmt.Fprintf(w, "output:\t%d bytes dropped: the disk was full\n", r.Exit.LogDropped)
		}
		u := r.Exit.Usage
		if u.WallSeconds > 0 {
			fmt.Fprintf(w, "usage:\twall %.2fs, cpu %.2fs, peak rss %s\n", u.WallSeconds, u.CPUSeconds, humanBytes(u.PeakRSSBytes))
		}
	}
	if p := r.Progress; p != nil {
		fmt.Fprintf(w, "progress:\t%s\n", strings.TrimPrefix(progressLine(p), "▶ "))
	}
	for _, l := range extra {
		fmt.Fprintln(w, l)
	}
	if f := r.Failure; f != nil {
		fmt.Fprintf(w, "failure:\t%s (confidence %.2f, retryable %v%s)\n", f.Code, f.Confidence, f.Retryable, byPlugin(f))
		fmt.Fprintf(w, "why:\t%s\n", f.Message)
		for i, s := range f.Suggestions {
			label := ""
			if i == 0 {
				label = "next:"
			}
			fmt.Fprintf(w, "%s\t• %s\n", label, s)
		}
		for i, e := range f.Evidence {
			label := ""
			if i == 0 {
				label = "evidence:"
			}
			fmt.Fprintf(w, "%s\t%s\n", label, e)
		}
	}
	printWhatRan(w, r) // record.go
	w.Flush()
}

// WaitCmd is `runbox wait`.
type WaitCmd struct {
	ID      string        `arg:"" name:"run" help:"${run_help}" placeholder:"RUN"`
	Timeout time.Duration `help:"Give up after this long (exit 124, the run goes on)." placeholder:"DUR"`
}

// Run waits.
func (c *WaitCmd) Run(ctx context.Context, a *App) error {
	r, err := a.client().Wait(ctx, c.ID, c.Timeout)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		if err := a.PrintJSON(r); err != nil {
			return err
		}
	} else if r.State.Terminal() {
		fmt.Fprintf(shown(), "%s %s\n", runName(r), describe(r))
	} else {
		fmt.Printf("%s still %s after %s\n", runName(r), r.State, c.Timeout)
	}
	if !r.State.Terminal() {
		return exitError{code: 124}
	}
	return exitError{code: exitCodeOf(r.State, r.Exit)}
}

func describe(r *api.Run) string {
	s := string(r.State)
	if r.Failure != nil {
		s += ": " + r.Failure.Code + " — " + r.Failure.Message
	}
	return s
}

// StopCmd is `runbox stop`. The run must be named: there is no default,
// since stopping the wrong run cannot be undone. @last is accepted (it is
// typed on purpose), and the line printed names the run it stopped.
type StopCmd struct {
	ID     string        `arg:"" name:"run" help:"${run_help} @last is the newest run when the daemon gets the request: if other runs may have started since, name the run." placeholder:"RUN"`
	Grace  time.Duration `help:"Time between SIGTERM and SIGKILL (default: the run's)." placeholder:"DUR"`
	NoWait bool          `help:"Return at once instead of waiting for the run to end."`
}

// Run stops a run.
func (c *StopCmd) Run(ctx context.Context, a *App) error {
	r, err := a.client().Stop(ctx, c.ID, c.Grace)
	if err != nil {
		return friendly(err)
	}
	ended := r.State.Terminal() // before the stop: there was nothing to stop
	if !c.NoWait && !ended {
		if r, err = a.client().Wait(ctx, r.ID, 0); err != nil {
			return friendly(err)
		}
	}
	if a.G.JSON {
		return a.PrintJSON(r)
	}
	if ended {
		fmt.Printf("%s %s (it had already ended: nothing to stop)\n", runName(r), r.State)
		return nil
	}
	fmt.Printf("%s %s\n", runName(r), r.State)
	return nil
}

// backendRef is the run's handle in its backend as that backend's own
// tools name it (scontrol and sacct take the job, docker the container):
// a Slurm job's for good (sacct keeps it), the others' while the run is
// live (then the container and the supervisor are gone).
func backendRef(r *api.Run) (label, ref string) {
	switch {
	case r.Ref == "":
		return "", ""
	case r.Sandbox == "slurm":
		return "slurm job", strings.TrimPrefix(r.Ref, "slurm:")
	case r.State.Terminal():
		return "", ""
	case r.Sandbox == "docker":
		return "container", r.Ref[:min(12, len(r.Ref))]
	case r.Sandbox == "process":
		return "supervisor", "pid " + r.Ref
	}
	return "ref", r.Ref
}

// runName is how output names a run: its short id, or the full id from a
// daemon that gives none.
func runName(r *api.Run) string {
	if r.ShortID != "" {
		return r.ShortID
	}
	return r.ID
}

// LogsCmd is `runbox logs`.
type LogsCmd struct {
	ID         string   `arg:"" name:"run" help:"${run_help}" placeholder:"RUN"`
	Follow     bool     `help:"Keep printing output until the run ends." short:"f"`
	Stream     []string `help:"Only these streams: stdout, stderr, setup-stdout, setup-stderr, meta. Repeatable." enum:"stdout,stderr,setup-stdout,setup-stderr,meta"`
	Tail       int      `help:"Start with the last N lines." default:"-1" placeholder:"N"`
	TailBytes  int64    `name:"tail-bytes" help:"Start no earlier than the last N bytes (a cut line is marked); with --tail the default is 8 MiB, 0 for no bound." default:"-1" placeholder:"N"`
	Raw        bool     `help:"Write the bytes exactly as stored (no replacement of invalid UTF-8)."`
	Timestamps bool     `help:"Prefix each chunk with the time it was read." short:"t"`
	Smoke      bool     `help:"Show the smoke run's output instead of the main run's."`
}

// defaultTailBytes bounds --tail when --tail-bytes is not given.
const defaultTailBytes = 8 << 20

// Run prints logs.
func (c *LogsCmd) Run(ctx context.Context, a *App) error {
	q := url.Values{}
	if c.Follow {
		q.Set("follow", "1")
	}
	for _, s := range c.Stream {
		q.Add("stream", s)
	}
	if c.Tail >= 0 {
		q.Set("tail", strconv.Itoa(c.Tail))
	}
	switch {
	case c.TailBytes > 0:
		q.Set("tail_bytes", strconv.FormatInt(c.TailBytes, 10))
	case c.TailBytes < 0 && c.Tail >= 0:
		// --tail 10 of a run that printed one 500 MB line is not 500 MB.
		q.Set("tail_bytes", strconv.Itoa(defaultTailBytes))
	}
	if c.Smoke {
		q.Set("smoke", "1")
	}
	dec := map[uint8]*client.TextDecoder{}
	enc := newJSONLines()
	err := a.client().Logs(ctx, c.ID, q, func(f client.Frame) error {
		if a.G.JSON {
			return enc.write(f)
		}
		data := f.Data
		if !c.Raw {
			d := dec[f.Stream]
			if d == nil {
				d = &client.TextDecoder{}
				dec[f.Stream] = d
			}
			data = d.Decode(data)
		}
		out := os.Stdout
		if client.Stream(f.Stream) != client.Stdout && len(c.Stream) == 0 {
			out = os.Stderr
		}
		if c.Timestamps {
			fmt.Fprintf(out, "%s %s | ", f.Time.Local().Format("15:04:05.000"), client.Stream(f.Stream))
		}
		_, err := out.Write(data)
		return err
	})
	return friendly(err)
}

// LsCmd is `runbox ls`.
type LsCmd struct {
	State  []string      `help:"Only runs in these states (queued, running, failed, ...). Repeatable." short:"s"`
	Parent string        `help:"Only retries of this run (its number, @last, or its id)." placeholder:"RUN"`
	Since  time.Duration `help:"Only runs created within this long, e.g. 24h." placeholder:"DUR"`
	Limit  int           `help:"Show at most N runs." default:"20" short:"n" placeholder:"N"`
	All    bool          `help:"Show every run (no limit)." short:"a"`
}

// Run lists runs.
func (c *LsCmd) Run(ctx context.Context, a *App) error {
	q := url.Values{}
	for _, s := range c.State {
		q.Add("state", s)
	}
	if c.Parent != "" {
		q.Set("parent", c.Parent)
	}
	if c.Since > 0 {
		q.Set("since", time.Now().Add(-c.Since).Format(time.RFC3339Nano))
	}
	if !c.All && c.Limit > 0 {
		q.Set("limit", strconv.Itoa(c.Limit))
	}
	runs, err := a.client().List(ctx, q)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		if runs == nil {
			runs = []*api.Run{}
		}
		return a.PrintJSON(api.RunList{Runs: runs})
	}
	w := tabwriter.NewWriter(shown(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "RUN\tSTATE\tSANDBOX\tCREATED\tDURATION\tCOMMAND\tRESULT")
	// RUN is the short id: what people type (the full id is in --json).
	for _, r := range runs {
		result := ""
		if r.Failure != nil {
			result = r.Failure.Code
		} else if r.Progress != nil && !r.State.Terminal() {
			result = strings.TrimPrefix(progressLine(r.Progress), "▶ ")
		} else if r.State == api.Queued && r.Reason != "queued" {
			result = r.Reason // why it waits (host/campaign.go)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", runName(r), r.State, r.Sandbox,
			r.CreatedAt.Local().Format("01-02 15:04:05"), runDuration(r), truncate(printable.Run(r.Spec.Command, r.Spec.Shell), 40), result)
	}
	return w.Flush()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// BackendsCmd is `runbox backends`.
type BackendsCmd struct{}

// Run shows backends.
func (c *BackendsCmd) Run(ctx context.Context, a *App) error {
	b, err := a.client().Backends(ctx)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(b)
	}
	w := tabwriter.NewWriter(shown(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "BACKEND\tAVAILABLE\tVERSION\tRUNTIMES\tDETAIL")
	for _, h := range b.Backends {
		fmt.Fprintf(w, "%s\t%v\t%s\t%s\t%s\n", h.Name, h.Available, h.Version, strings.Join(h.Runtimes, ","), h.Detail)
	}
	w.Flush()
	fmt.Fprintf(shown(), "\nauto → %s: %s\n", b.Default, b.Reason)
	warnDamage(ctx, a)
	printIsolationInfo(b)
	return nil
}

// warnDamage prints the daemon's news of a damaged store, if it has any.
func warnDamage(ctx context.Context, a *App) {
	if h, err := a.client().Health(ctx); err == nil && h.Store != nil {
		fmt.Fprintf(os.Stderr, "\nwarning: %s\n", h.Store.Message)
	}
}

// byPlugin names the plugin (and version) that gave a failure answer.
func byPlugin(f *api.Failure) string {
	switch {
	case f.Plugin == "":
		return ""
	case f.PluginVersion == "":
		return ", by " + f.Plugin
	}
	return ", by " + f.Plugin + " " + f.PluginVersion
}
