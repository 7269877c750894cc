package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api/client"
)

// The MCP server against the CLI, side by side on one real daemon (runboxd
// with its plugins, started by bin/runbox; `make build` first):
//
//	go test -run '^$' -bench . -benchtime 200x ./clients/mcp/
//
// BenchmarkStatus: one local_status round trip through `runbox mcp` over
// stdio (the SDK's client, as an agent's), the same in process (no pipes),
// `runbox --json status RUN` (a process per call, as an agent without MCP
// would run it), and the daemon's own answer (api/client, for scale). BenchmarkFirstOutput: from the call to the run's
// first output line (the time the daemon stamped on it), for
// local_execute of a plan and for `runbox run -d` and `runbox exec -d`.

type benchEnv struct {
	bin, home string
	c         *client.Client
	stdio     *mcpsdk.ClientSession
	inproc    *mcpsdk.ClientSession
}

func newBenchEnv(b *testing.B) *benchEnv {
	root, _ := filepath.Abs("../..")
	bin := filepath.Join(root, "bin", "runbox")
	if _, err := os.Stat(filepath.Join(root, "bin", "runboxd")); err != nil {
		b.Skip("run make build first: the benchmark uses bin/runbox and bin/runboxd")
	}
	home, err := os.MkdirTemp("", "rbb")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(home) })
	b.Cleanup(func() { stopDaemonIn(b, home) })
	e := &benchEnv{bin: bin, home: home}
	ctx := context.Background()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = append(withoutEnv(os.Environ(), "RUNBOX_SOCKET", "RUNBOX_HOME"), "RUNBOX_HOME="+home)
	cmd.Dir = b.TempDir()
	cl := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil)
	if e.stdio, err = cl.Connect(ctx, &mcpsdk.CommandTransport{Command: cmd}, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.stdio.Close() })
	// The first call starts the daemon.
	if res, err := e.stdio.CallTool(ctx, &mcpsdk.CallToolParams{Name: "list_compute_backends"}); err != nil || res.IsError {
		b.Fatalf("list_compute_backends: %v %v", res, err)
	}
	e.c = client.New(client.Options{Home: home, Socket: filepath.Join(home, "runbox.sock")})
	st, ct := mcpsdk.NewInMemoryTransports()
	srv := New(e.c, Options{Workdir: cmd.Dir})
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	if e.inproc, err = mcpsdk.NewClient(&mcpsdk.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.inproc.Close() })
	return e
}

func (e *benchEnv) call(b *testing.B, cs *mcpsdk.ClientSession, name string, args map[string]any) map[string]any {
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		b.Fatalf("%s: %v %v", name, resultText(res), err)
	}
	return res.StructuredContent.(map[string]any)
}

func (e *benchEnv) cli(b *testing.B, args ...string) string {
	cmd := exec.Command(e.bin, args...)
	cmd.Env = append(withoutEnv(os.Environ(), "RUNBOX_SOCKET", "RUNBOX_HOME"), "RUNBOX_HOME="+e.home)
	out, err := cmd.Output()
	if err != nil {
		b.Fatalf("runbox %v: %v", args, err)
	}
	return strings.TrimSpace(string(out))
}

// plan makes a plan of a command that prints one line at once.
func (e *benchEnv) plan(b *testing.B) string {
	p := e.call(b, e.stdio, "compute_plan", map[string]any{"backend": "local", "command": []any{"echo", "first"}})
	return p["plan_id"].(string)
}

func BenchmarkStatus(b *testing.B) {
	e := newBenchEnv(b)
	id := e.call(b, e.stdio, "local_execute", map[string]any{"plan_id": e.plan(b)})["run_id"].(string)
	e.call(b, e.stdio, "local_wait", map[string]any{"run_id": id})
	b.Run("mcp-stdio", func(b *testing.B) {
		for b.Loop() {
			e.call(b, e.stdio, "local_status", map[string]any{"run_id": id})
		}
	})
	b.Run("mcp-inprocess", func(b *testing.B) {
		for b.Loop() {
			e.call(b, e.inproc, "local_status", map[string]any{"run_id": id})
		}
	})
	b.Run("api-get", func(b *testing.B) {
		for b.Loop() {
			if _, err := e.c.Get(context.Background(), id); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cli-status-json", func(b *testing.B) {
		for b.Loop() {
			e.cli(b, "--json", "status", id)
		}
	})
}

func BenchmarkFirstOutput(b *testing.B) {
	e := newBenchEnv(b)
	plan := e.plan(b)
	// firstOutput waits for the run to end and returns when its first
	// output was read, as the daemon stamped it.
	firstOutput := func(b *testing.B, id string) time.Time {
		if _, err := e.c.Wait(context.Background(), id, 30*time.Second); err != nil {
			b.Fatal(err)
		}
		var first time.Time
		err := e.c.Logs(context.Background(), id, nil, func(f client.Frame) error {
			if first.IsZero() && client.Stream(f.Stream) == client.Stdout {
				first = f.Time
			}
			return nil
		})
		if err != nil || first.IsZero() {
			b.Fatalf("run %s: no output (%v)", id, err)
		}
		return first
	}
	measure := func(b *testing.B, start func() string) {
		var lat []time.Duration
		for b.Loop() {
			t0 := time.Now()
			id := start()
			b.StopTimer()
			lat = append(lat, firstOutput(b, id).Sub(t0))
			b.StartTimer()
		}
		slices.Sort(lat)
		var sum time.Duration
		for _, d := range lat {
			sum += d
		}
		b.ReportMetric(float64(sum.Microseconds())/float64(len(lat))/1000, "ms-mean")
		b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "ms-p50")
		b.ReportMetric(float64(lat[len(lat)*9/10].Microseconds())/1000, "ms-p90")
	}
	b.Run("mcp-local_execute", func(b *testing.B) {
		measure(b, func() string {
			return e.call(b, e.stdio, "local_execute", map[string]any{"plan_id": plan})["run_id"].(string)
		})
	})
	b.Run("cli-run-d", func(b *testing.B) {
		dir := b.TempDir()
		measure(b, func() string { return e.cli(b, "run", "-d", "-w", dir, "--", "echo", "first") })
	})
	b.Run("cli-exec-d", func(b *testing.B) {
		measure(b, func() string { return e.cli(b, "exec", "-d", plan) })
	})
}
