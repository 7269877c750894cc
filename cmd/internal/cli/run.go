package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/sdk"
)

// SpecFlags describe how to run a command; run and plan share them.
type SpecFlags struct {
	Sandbox  string            `help:"Where to run: process, docker, slurm or auto (Docker on Linux when it is up and has the image)." enum:"auto,process,docker,slurm" default:"auto"`
	Image    string            `help:"Container image (docker sandbox)." placeholder:"IMAGE"`
	Workdir  string            `help:"Workspace directory (default: the current directory)." type:"existingdir" short:"w"`
	Env      []string          `help:"Set an environment variable (KEY=VALUE, or KEY to pass this shell's value). Repeatable." short:"e" placeholder:"KEY=VALUE"`
	CleanEnv bool              `help:"Start from an empty environment (plus --env-allow names) instead of inheriting this shell's."`
	EnvAllow []string          `help:"With --clean-env, variables to copy from this shell. Repeatable." placeholder:"NAME"`
	Stdin    string            `help:"Feed the run's stdin from FILE, or - for this command's stdin." placeholder:"FILE"`
	Setup    []string          `help:"Shell command to run first, in the same workspace; its output is kept apart. Repeatable." placeholder:"CMD"`
	Asset    []string          `help:"Place a file or directory into the workspace: SRC[:DST]. Repeatable." placeholder:"SRC[:DST]"`
	Timeout  time.Duration     `help:"End the run (whole process tree) after this long, e.g. 30m." placeholder:"DUR"`
	Grace    time.Duration     `help:"Time between SIGTERM and SIGKILL when ending a run." default:"10s" placeholder:"DUR"`
	Memory   string            `help:"Memory limit, e.g. 512m, 4g; exceeding it ends the run as OOM_KILLED." placeholder:"SIZE"`
	CPUs     float64           `help:"CPU limit, e.g. 1.5: the run's cgroup (a CFS quota) for a process run, the container's for docker, --cpus-per-task on Slurm." name:"cpus" placeholder:"N"`
	Pids     int64             `help:"Process count limit for the run's whole tree (default 4096 for process and docker runs; a Slurm job has the cluster's)." placeholder:"N"`
	Network  string            `help:"Container network: none (default), bridge or host. A process run has this host's network (--isolate net cuts it) and takes only host, which lets an --isolate net/full run out; a Slurm job takes none." enum:",none,bridge,host" default:""`
	GPUs     string            `name:"gpus" help:"GPUs: a count or all, handed out by the daemon (the run waits until they are free of other runbox runs; CUDA_VISIBLE_DEVICES for a process, a device request for a container); device=0,1 for a container." placeholder:"GPUS"`
	ReadOnly bool              `help:"Read-only container root filesystem with a tmpfs /tmp."`
	Keep     bool              `help:"Keep the container after the run (docker)." name:"keep-container"`
	Pull     bool              `help:"Pull the image when it is not present locally (docker); without it a missing image is refused at once."`
	Shell    bool              `help:"Run the command through sh -c (otherwise it is exec'd as an argv)."`
	Name     string            `help:"A name for the run." placeholder:"NAME"`
	Label    map[string]string `help:"Label the run (KEY=VALUE). Repeatable." placeholder:"KEY=VALUE"`
	Stall    time.Duration     `help:"Stop the run as STALLED when it prints nothing for this long." name:"stall-timeout" placeholder:"DUR"`
	SlurmFlags
	IsolateFlags
	RecordFlags // record.go
}

// Validate rejects limits that cannot mean what they say (kong calls it
// while parsing, so a bad value is a usage error: exit 2). Zero means "no
// limit" only where the help says so; a negative value never does.
func (f *SpecFlags) Validate() error {
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"--timeout", f.Timeout}, {"--grace", f.Grace}, {"--stall-timeout", f.Stall}} {
		if d.v < 0 {
			return fmt.Errorf("%s %s: a duration cannot be negative (leave the flag out for none)", d.name, d.v)
		}
	}
	if err := checkCPUs(f.CPUs); err != nil {
		return err
	}
	if err := checkPids(f.Pids); err != nil {
		return err
	}
	if f.Memory != "" {
		if _, err := parseMemory(f.Memory); err != nil {
			return err
		}
	}
	return nil
}

func parseMemory(s string) (int64, error) {
	n, err := units.RAMInBytes(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("--memory %q: want a size like 512m or 4g", s)
	}
	return n, nil
}

// request turns flags into an API request.
func (f *SpecFlags) request(cmd []string) (api.RunRequest, error) {
	wd := f.Workdir
	if wd == "" {
		var err error
		if wd, err = os.Getwd(); err != nil {
			return api.RunRequest{}, err
		}
	}
	wd, err := absPath(wd)
	if err != nil {
		return api.RunRequest{}, err
	}
	req := api.RunRequest{
		Command: cmd, Shell: f.Shell, Workdir: wd, Sandbox: f.Sandbox, Image: f.Image,
		CleanEnv: f.CleanEnv, EnvAllow: f.EnvAllow, Setup: f.Setup,
		Timeout: api.Duration(f.Timeout), Grace: api.Duration(f.Grace),
		Limits:  api.Limits{CPUs: f.CPUs, Pids: f.Pids},
		Network: f.Network, GPUs: f.GPUs, ReadOnlyRoot: f.ReadOnly, KeepContainer: f.Keep, Pull: f.Pull,
		Name: f.Name, Labels: f.Label, StallTimeout: api.Duration(f.Stall),
		User:      fmt.Sprintf("%d:%d", os.Getuid(), os.Getgid()),
		ClientEnv: os.Environ(),
	}
	if err := f.IsolateFlags.apply(&req); err != nil {
		return req, err
	}
	f.RecordFlags.apply(&req)
	for _, kv := range f.Env {
		if !strings.Contains(kv, "=") {
			v, ok := os.LookupEnv(kv)
			if !ok {
				return req, fmt.Errorf("--env %s: not set in this shell (use KEY=VALUE)", kv)
			}
			kv += "=" + v
		}
		req.Env = append(req.Env, kv)
	}
	if err := f.slurmRequest(&req); err != nil {
		return req, err
	}
	if f.Memory != "" {
		n, err := parseMemory(f.Memory)
		if err != nil {
			return req, err
		}
		req.Limits.MemoryBytes = n
	}
	for _, a := range f.Asset {
		src, dst, _ := strings.Cut(a, ":")
		abs, err := absPath(src)
		if err != nil {
			return req, err
		}
		if _, err := os.Stat(abs); err != nil {
			return req, fmt.Errorf("--asset %s: %w", src, err)
		}
		if dst == "" {
			dst = baseName(abs)
		}
		req.Assets = append(req.Assets, api.Asset{Src: abs, Dst: dst})
	}
	switch f.Stdin {
	case "":
	case "-":
		b, err := io.ReadAll(io.LimitReader(os.Stdin, 64<<20+1))
		if err != nil {
			return req, fmt.Errorf("read stdin: %w", err)
		}
		if len(b) > 64<<20 {
			return req, fmt.Errorf("stdin is over 64 MiB: save it to a file and pass --stdin FILE")
		}
		req.Stdin = b
	default:
		abs, err := absPath(f.Stdin)
		if err != nil {
			return req, err
		}
		if _, err := os.Stat(abs); err != nil {
			return req, fmt.Errorf("--stdin: %w", err)
		}
		req.StdinFile = abs
	}
	return req, nil
}

// commandArgs is the command after "--" (kong keeps the separator in a
// passthrough argument), or an error saying how to give one.
func commandArgs(args []string, verb string) ([]string, error) {
	switch {
	case len(args) > 0 && args[0] == "--":
		args = args[1:]
	case len(args) > 0 && strings.HasPrefix(args[0], "-") && args[0] != "-":
		// kong hands a flag it does not know to the passthrough command
		// rather than reject it: a typo must not become the command.
		return nil, usageError{errorf("unknown flag %s (put the command after --: runbox %s [flags] -- CMD [ARGS...])", args[0], verb)}
	}
	if len(args) == 0 {
		return nil, errorf("no command given: runbox %s [flags] -- CMD [ARGS...]", verb)
	}
	return args, nil
}

// RunCmd is `runbox run`.
type RunCmd struct {
	SpecFlags
	CampaignFlags          // sweep.go: --after, --after-any
	Detach        bool     `help:"Start the run and print its id instead of streaming it." short:"d"`
	Command       []string `arg:"" optional:"" passthrough:"" help:"The command, after --." placeholder:"CMD"`
}

// Run runs the command.
func (c *RunCmd) Run(ctx context.Context, a *App) error {
	cmd, err := commandArgs(c.Command, "run")
	if err != nil {
		return err
	}
	req, err := c.request(cmd)
	if err != nil {
		return err
	}
	c.CampaignFlags.apply(&req)
	return a.startRun(ctx, req, c.Detach)
}

// startRun submits req and either prints the run id (detach) or streams the
// run to this terminal until it ends.
func (a *App) startRun(ctx context.Context, req api.RunRequest, detach bool) error {
	if detach {
		run, err := a.client().Submit(ctx, req)
		if err != nil {
			return friendly(err)
		}
		return a.printRunID(run)
	}
	return a.attach(ctx, func(ctx context.Context, fn func(client.Frame) error) (json.RawMessage, error) {
		return a.client().Attach(ctx, req, fn)
	})
}

func (a *App) printRunID(run *api.Run) error {
	if a.G.JSON {
		return a.PrintJSON(run)
	}
	fmt.Println(run.ID)
	return nil
}

// attach streams a run to this terminal: output to stdout/stderr as the
// run wrote it, live progress on a TTY, Ctrl-C stops the run. It ends with
// the run's exit code.
func (a *App) attach(ctx context.Context, start func(context.Context, func(client.Frame) error) (json.RawMessage, error)) error {
	out := newTerminal(a.G.JSON, a.G.ProgressLines)
	var runID, runName string // full id for the daemon, short for people
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		stopping := false
		for range sigs {
			if runID == "" {
				continue
			}
			if stopping {
				fmt.Fprintf(os.Stderr, "\nrunbox: detaching; run %s goes on (runbox stop %s)\n", runName, runName)
				os.Exit(130)
			}
			stopping = true
			out.clear()
			fmt.Fprintf(os.Stderr, "\nrunbox: stopping run %s (Ctrl-C again to detach)\n", runName)
			if _, err := a.client().Stop(context.Background(), runID, 0); err != nil {
				fmt.Fprintln(os.Stderr, "runbox: stop:", friendly(err))
			}
		}
	}()
	final, err := start(ctx, func(f client.Frame) error {
		switch f.Stream {
		case api.StreamRun:
			var r runEnd
			if err := json.Unmarshal(f.Data, &r); err == nil {
				runID, runName = r.ID, r.name()
				out.started(&r)
			}
		case api.StreamProgress:
			var p api.Progress
			if err := json.Unmarshal(f.Data, &p); err == nil {
				out.progress(&p)
			}
		default:
			out.output(client.Stream(f.Stream), f.Data)
		}
		return nil
	})
	out.clear()
	if err != nil {
		if runID != "" {
			return fmt.Errorf("lost the stream of run %s (%v); it goes on: runbox status %s", runName, friendly(err), runName)
		}
		return friendly(err)
	}
	var end runEnd
	if err := json.Unmarshal(final, &end); err != nil {
		return fmt.Errorf("run %s ended, but its record did not decode: %w", runID, err)
	}
	if a.G.JSON {
		if err := a.PrintJSON(final); err != nil {
			return err
		}
	} else {
		out.summary(&end)
	}
	return exitError{code: exitCodeOf(end.State, end.Exit)}
}

// runEnd is what an attached client reads of its run (a api.Run): what
// it prints and what its exit code comes from. Decoding a whole api.Run,
// spec included, built encoding/json's decoders for types this process
// never looks at, ~0.4 ms of each `runbox run`.
type runEnd struct {
	ID        string       `json:"id"`
	ShortID   string       `json:"short_id"`
	State     api.State    `json:"state"`
	Sandbox   string       `json:"sandbox"`
	StartedAt *time.Time   `json:"started_at"`
	EndedAt   *time.Time   `json:"ended_at"`
	Exit      *api.Exit    `json:"exit"`
	Failure   *api.Failure `json:"failure"`
}

// name is how a note names the run: its short id, or the full id from a
// daemon that gives none.
func (r *runEnd) name() string {
	if r.ShortID != "" {
		return r.ShortID
	}
	return r.ID
}

// exitCodeOf maps a run's end to this process's exit code: the run's own
// code, 130 when cancelled, 124 on timeout (like timeout(1)), 125 when the
// sandbox failed (like docker run).
func exitCodeOf(state api.State, exit *api.Exit) int {
	switch state {
	case api.Succeeded:
		return 0
	case api.Cancelled:
		return 130
	case api.TimedOut:
		return 124
	case api.Lost:
		return 125
	}
	if exit != nil {
		if exit.Error != "" && exit.Code == 0 {
			return 125
		}
		if exit.Code != 0 {
			return exit.Code
		}
	}
	return 1
}

func humanBytes(n uint64) string { return units.BytesSize(float64(n)) }

// fmtFloat writes a value for people; NaN and ±Inf as the JSON output
// spells them ("NaN", "Infinity", "-Infinity"), so loss=NaN reads the same
// in `runbox status` and `runbox status --json`.
func fmtFloat(v float64) string { return fmtFloatPrec(v, 4) }

// fmtFloatPrec is fmtFloat with prec significant digits.
func fmtFloatPrec(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return sdk.FormatMetric(v)
	}
	return strconv.FormatFloat(v, 'g', prec, 64)
}
