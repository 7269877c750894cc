package cli

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"golang.org/x/term"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/printable"
)

// SweepCmd is `runbox sweep`: a grid of runs of one command.
type SweepCmd struct {
	Submit SweepSubmitCmd `cmd:"" default:"withargs" hidden:"" help:"Start a sweep."`
	Status SweepStatusCmd `cmd:"" help:"Show a sweep's members: params, state, progress, metrics, failure."`
	Wait   SweepWaitCmd   `cmd:"" help:"Wait until every member of a sweep has ended."`
	Stop   SweepStopCmd   `cmd:"" help:"Cancel a sweep's queued members and stop its running ones."`
	Ls     SweepLsCmd     `cmd:"" help:"List sweeps, newest first."`
}

// CampaignFlags are run's flags that tie a run to others (host/campaign.go).
type CampaignFlags struct {
	After    []string `help:"Start after these runs have succeeded (RUN[,RUN...]); if one fails or is cancelled this run is cancelled, naming it." placeholder:"RUN" sep:"none"`
	AfterAny bool     `help:"With --after, start however the runs end." name:"after-any"`
}

func (f CampaignFlags) apply(req *api.RunRequest) {
	req.After, req.AfterAny = f.After, f.AfterAny
}

// SweepSubmitCmd is `runbox sweep [flags] -- CMD {NAME}`.
type SweepSubmitCmd struct {
	SpecFlags
	CampaignFlags
	Param       []string `help:"A parameter and its values: NAME=V1,V2,... Repeatable; the sweep is their grid." sep:"none" placeholder:"NAME=V1,V2"`
	ParamsFile  string   `help:"Parameter sets, one per member: a .jsonl file (one object per line) or a .csv file (a header row of names)." type:"existingfile" placeholder:"FILE"`
	Parallel    int      `help:"At most this many members at once (0: only the daemon's own limit)." placeholder:"N"`
	MaxFailures int      `help:"After this many failed members, cancel those not yet started (0: never)." name:"max-failures" placeholder:"K"`
	Yes         bool     `help:"Allow a sweep of more than 10000 members."`
	Wait        bool     `help:"Wait for the sweep to end (a live summary on a terminal); exit 1 if a member did not succeed."`
	Command     []string `arg:"" optional:"" passthrough:"" help:"The command, after --; {NAME} is replaced with each member's value." placeholder:"CMD"`
}

// Run starts the sweep and prints its id.
func (c *SweepSubmitCmd) Run(ctx context.Context, a *App) error {
	cmd, err := commandArgs(c.Command, "sweep")
	if err != nil {
		return err
	}
	names, sets, err := paramSets(c.Param, c.ParamsFile)
	if err != nil {
		return usageError{err}
	}
	req, err := c.request(cmd)
	if err != nil {
		return err
	}
	c.CampaignFlags.apply(&req)
	sreq := api.SweepRequest{Run: req, ParamNames: names, Sets: sets, Parallel: c.Parallel, MaxFailures: c.MaxFailures, Name: c.Name, Yes: c.Yes}
	sw, err := a.client().SubmitSweep(ctx, sreq)
	if err != nil {
		return friendly(err)
	}
	if !c.Wait {
		if a.G.JSON {
			return a.PrintJSON(sw)
		}
		fmt.Println(sw.ID)
		return nil
	}
	fmt.Fprintf(os.Stderr, "sweep %s: %d members\n", sw.ID, sw.Members)
	return a.waitSweep(ctx, sw.ID)
}

// paramSets is the grid of the --param lists (first varies slowest), or
// the sets of a params file.
func paramSets(params []string, file string) ([]string, []map[string]string, error) {
	if file != "" && len(params) > 0 {
		return nil, nil, fmt.Errorf("give --param or --params-file, not both")
	}
	if file != "" {
		return readParamsFile(file)
	}
	if len(params) == 0 {
		return nil, nil, fmt.Errorf("a sweep needs --param NAME=V1,V2,... or --params-file FILE")
	}
	var names []string
	var values [][]string
	for _, p := range params {
		name, list, ok := strings.Cut(p, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			return nil, nil, fmt.Errorf("--param %q: want NAME=V1,V2 (any number of values)", p)
		}
		for _, n := range names {
			if n == name {
				return nil, nil, fmt.Errorf("--param %s is given twice", name)
			}
		}
		// Every value between commas is one, an empty one too: x=a,,b is
		// three members. A list with no value but empty ones (x=, x=,,)
		// is taken for a mistake.
		var vs []string
		some := false
		for _, v := range strings.Split(list, ",") {
			v = strings.TrimSpace(v)
			vs = append(vs, v)
			some = some || v != ""
		}
		if !some {
			return nil, nil, fmt.Errorf("--param %s has no values (an empty value is kept beside others: %s=,a is two members, one with %s empty)", name, name, name)
		}
		names = append(names, name)
		values = append(values, vs)
	}
	total := 1
	for _, vs := range values {
		total *= len(vs)
		if total > 10_000_000 {
			return nil, nil, fmt.Errorf("the grid has more than 10000000 members")
		}
	}
	sets := make([]map[string]string, 0, total)
	idx := make([]int, len(values))
	for range total {
		set := make(map[string]string, len(names))
		for i, n := range names {
			set[n] = values[i][idx[i]]
		}
		sets = append(sets, set)
		for i := len(idx) - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < len(values[i]) {
				break
			}
			idx[i] = 0
		}
	}
	return names, sets, nil
}

func readParamsFile(path string) ([]string, []map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	// Excel (and some editors) write a UTF-8 byte order mark first: it is
	// not part of the first name.
	br := bufio.NewReader(f)
	if b, err := br.Peek(3); err == nil && string(b) == "\ufeff" {
		_, _ = br.Discard(3)
	}
	switch strings.ToLower(filepath.Ext(path)) {
	case ".csv":
		rows, err := csv.NewReader(br).ReadAll()
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(rows) < 2 {
			return nil, nil, fmt.Errorf("%s: want a header row of names and at least one row of values", path)
		}
		names := rows[0]
		var sets []map[string]string
		for _, row := range rows[1:] {
			set := map[string]string{}
			for i, n := range names {
				set[strings.TrimSpace(n)] = strings.TrimSpace(row[i])
			}
			sets = append(sets, set)
		}
		for i := range names {
			names[i] = strings.TrimSpace(names[i])
		}
		return names, sets, nil
	case ".jsonl", ".ndjson":
		dec := json.NewDecoder(br)
		var names []string
		var sets []map[string]string
		for line := 1; ; line++ {
			var obj map[string]json.RawMessage
			if err := dec.Decode(&obj); err == io.EOF {
				break
			} else if err != nil {
				return nil, nil, fmt.Errorf("%s: set %d: %w", path, line, err)
			}
			set := map[string]string{}
			for k, raw := range obj {
				var s string
				if json.Unmarshal(raw, &s) != nil {
					s = string(raw) // numbers and booleans as written
				}
				set[k] = s
			}
			if names == nil {
				for k := range set {
					names = append(names, k)
				}
				sort.Strings(names)
			}
			sets = append(sets, set)
		}
		if len(sets) == 0 {
			return nil, nil, fmt.Errorf("%s: no parameter sets", path)
		}
		return names, sets, nil
	}
	return nil, nil, fmt.Errorf("%s: want a .jsonl or .csv file", path)
}

// SweepStatusCmd is `runbox sweep status ID`.
type SweepStatusCmd struct {
	ID   string `arg:"" name:"sweep" help:"${sweep_help}" placeholder:"SWEEP"`
	Sort string `help:"Sort members by this metric, best first (loss-like names: lowest)." placeholder:"METRIC"`
}

// Run prints the table.
func (c *SweepStatusCmd) Run(ctx context.Context, a *App) error {
	sw, err := a.client().Sweep(ctx, c.ID, c.Sort)
	if err != nil {
		return argError(err) // an unknown --sort metric: exit 2
	}
	if a.G.JSON {
		return a.PrintJSON(sw)
	}
	printSweep(shown(), sw)
	return nil
}

// SweepWaitCmd is `runbox sweep wait ID`.
type SweepWaitCmd struct {
	ID string `arg:"" name:"sweep" help:"${sweep_help}" placeholder:"SWEEP"`
}

// Run waits; exit 1 when a member did not succeed.
func (c *SweepWaitCmd) Run(ctx context.Context, a *App) error { return a.waitSweep(ctx, c.ID) }

func (a *App) waitSweep(ctx context.Context, id string) error {
	done := make(chan struct{})
	if !a.G.JSON && term.IsTerminal(int(os.Stderr.Fd())) {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-done:
					fmt.Fprint(os.Stderr, "\r\033[K")
					return
				case <-t.C:
					if sw, err := a.client().Sweep(ctx, id, ""); err == nil {
						fmt.Fprintf(os.Stderr, "\r\033[K%s", summary(sw))
					}
				}
			}
		}()
	}
	sw, err := a.client().WaitSweep(ctx, id)
	close(done)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		if err := a.PrintJSON(sw); err != nil {
			return err
		}
	} else {
		printSweep(shown(), sw)
	}
	if sw.Counts[api.Succeeded] != sw.Members {
		return ExitCode(1)
	}
	return nil
}

func summary(sw *api.Sweep) string {
	return fmt.Sprintf("sweep %s: %d members: %s", shortSweep(sw.ID), sw.Members, summaryCounts(*sw))
}

func shortSweep(id string) string {
	if len(id) > 12 {
		return id[:12]
	}
	return id
}

// SweepStopCmd is `runbox sweep stop ID`.
type SweepStopCmd struct {
	ID string `arg:"" name:"sweep" help:"${sweep_help}" placeholder:"SWEEP"`
}

// Run stops the sweep.
func (c *SweepStopCmd) Run(ctx context.Context, a *App) error {
	sw, err := a.client().StopSweep(ctx, c.ID)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(sw)
	}
	fmt.Println(summary(sw))
	return nil
}

// SweepLsCmd is `runbox sweep ls`.
type SweepLsCmd struct{}

// Run lists sweeps.
func (c *SweepLsCmd) Run(ctx context.Context, a *App) error {
	l, err := a.client().Sweeps(ctx)
	if err != nil {
		return friendly(err)
	}
	if a.G.JSON {
		return a.PrintJSON(api.SweepList{Sweeps: l})
	}
	tw := tabwriter.NewWriter(shown(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWEEP\tNAME\tMEMBERS\tPARALLEL\tSTATE\tCOMMAND")
	for _, sw := range l {
		state := summaryCounts(sw)
		if sw.Stopped != "" {
			state += " (" + sw.Stopped + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\n", sw.ID, sw.Name, sw.Members, limitText(sw.Parallel), state, printable.Command(sw.Command))
	}
	return tw.Flush()
}

// summaryCounts counts the members in each state, in lifecycle order:
// every state, preparing too (a member copying its snapshot, or pending
// in Slurm's queue, was left out of the count).
func summaryCounts(sw api.Sweep) string {
	var parts []string
	for _, st := range api.States {
		if n := sw.Counts[st]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, st))
		}
	}
	return strings.Join(parts, ", ")
}

func limitText(n int) string {
	if n == 0 {
		return "-"
	}
	return strconv.Itoa(n)
}

// maxCell is the widest a param value is shown in the member table;
// --json has it whole.
const maxCell = 40

// cell is v for a table cell: one line (control characters escaped, as
// commands are shown), cut with an ellipsis past maxCell characters.
func cell(v string) string {
	return truncate(oneLine.Replace(printable.String(v)), maxCell)
}

// oneLine shows a value's newlines and tabs as escapes, so it stays in its cell.
var oneLine = strings.NewReplacer("\n", `\n`, "\t", `\t`)

// printSweep is the member table: params, state, progress, each metric's
// last and best, failure code.
func printSweep(w io.Writer, sw *api.Sweep) {
	fmt.Fprintln(w, summary(sw))
	if sw.Stopped != "" {
		fmt.Fprintln(w, sw.Stopped)
	}
	var metrics []string
	seen := map[string]bool{}
	for _, r := range sw.Runs {
		for m := range r.Metrics {
			if !seen[m] {
				seen[m] = true
				metrics = append(metrics, m)
			}
		}
	}
	sort.Strings(metrics)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	head := []string{"RUN"}
	head = append(head, sw.ParamNames...)
	head = append(head, "STATE", "PROGRESS")
	for _, m := range metrics {
		head = append(head, m+" (last/best)")
	}
	head = append(head, "FAILURE")
	fmt.Fprintln(tw, strings.Join(head, "\t"))
	for _, r := range sw.Runs {
		id := r.ShortID
		if id == "" {
			id = r.ID
		}
		row := []string{id}
		for _, n := range sw.ParamNames {
			row = append(row, cell(r.Params[n]))
		}
		state := string(r.State)
		if r.State == api.Queued && r.Reason != "" && r.Reason != "queued" {
			state += ": " + r.Reason
		}
		if r.Attempt > 1 { // a retried member: its row is the latest attempt
			state += fmt.Sprintf(" (attempt %d)", r.Attempt)
		}
		prog := "-"
		if r.Progress != nil {
			prog = fmt.Sprintf("%.0f%%", *r.Progress)
		}
		row = append(row, state, prog)
		for _, m := range metrics {
			if v, ok := r.Metrics[m]; ok {
				row = append(row, fmtFloat(float64(v.Last))+"/"+fmtFloat(float64(v.Best)))
			} else {
				row = append(row, "-")
			}
		}
		f := r.Failure
		if f == "" {
			f = "-"
		}
		row = append(row, f)
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	_ = tw.Flush()
}
