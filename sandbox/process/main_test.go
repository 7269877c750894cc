package process_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/sandbox/process/supervisortest"
	"github.com/runbox/runbox/sandbox/runlog"
)

// The test binary doubles as the supervisor (supervisortest.Main) and as
// a throwaway daemon for the kill -9 test.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == unprivArg {
		os.Exit(unprivDaemon(filepath.Dir(os.Args[0]), os.Args[2]))
	}
	if len(os.Args) > 2 && os.Args[1] == probeArg {
		os.Exit(probe(os.Args[2]))
	}
	if len(os.Args) > 2 && os.Args[1] == "__start_helper" {
		os.Exit(startHelper(os.Args[2], len(os.Args) > 3 && os.Args[3] == "recycled"))
	}
	supervisortest.Main(m)
}

// startHelper plays a daemon: it starts the run described by the JSON spec,
// says so on stdout, and waits to be killed. With recycled it first runs
// two short runs beside it, so that the run goes to a standby supervisor
// that has already served one.
func startHelper(specJSON string, recycled bool) int {
	var spec sandbox.Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	sb := newSandbox(process.Options{Standby: recycled})
	if recycled {
		var pid int
		for i := range 2 {
			warm := spec
			warm.Command, warm.Shell, warm.Stdin, warm.StdinFile = []string{"true"}, false, nil, ""
			warm.StateDir = spec.StateDir + fmt.Sprintf("-warm%d", i)
			warm.LogPath = warm.StateDir + ".log"
			h, err := sb.Start(context.Background(), warm)
			if err == nil {
				_, err = h.Wait(context.Background())
			}
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			for deadline := time.Now().Add(time.Minute); sb.StandbyPid() == 0 || (i == 1 && strconv.Itoa(sb.StandbyPid()) != h.Ref()); time.Sleep(5 * time.Millisecond) {
				if time.Now().After(deadline) {
					fmt.Fprintln(os.Stderr, "no recycled standby")
					return 1
				}
			}
			pid = sb.StandbyPid()
		}
		h, err := sb.Start(context.Background(), spec)
		if err != nil || h.Ref() != strconv.Itoa(pid) {
			fmt.Fprintf(os.Stderr, "run not on the recycled supervisor %d: %v\n", pid, err)
			return 1
		}
		fmt.Printf("started %s\n", h.Ref())
		select {}
	}
	h, err := sb.Start(context.Background(), spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("started %s\n", h.Ref())
	select {}
}

func newSandbox(opts process.Options) *process.Sandbox {
	if opts.Exe == "" {
		opts.Exe, _ = os.Executable()
	}
	return process.New(opts)
}

// newSpec is a spec whose workdir, log and state live in a temp dir.
func newSpec(t testing.TB, cmd ...string) sandbox.Spec {
	t.Helper()
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// The supervisor's stderr: a race report or panic there fails the test.
		b, _ := os.ReadFile(filepath.Join(dir, "state", "supervisor.log"))
		if bytes.Contains(b, []byte("DATA RACE")) || bytes.Contains(b, []byte("panic:")) {
			t.Errorf("supervisor.log:\n%s", b)
		}
	})
	return sandbox.Spec{
		RunID:    filepath.Base(dir),
		Command:  cmd,
		Workdir:  work,
		LogPath:  filepath.Join(dir, "run.log"),
		StateDir: filepath.Join(dir, "state"),
		Grace:    time.Second,
	}
}

// shSpec runs script through sh -c.
func shSpec(t testing.TB, script string) sandbox.Spec {
	s := newSpec(t, script)
	s.Shell = true
	return s
}

func start(t testing.TB, sb *process.Sandbox, spec sandbox.Spec) sandbox.Handle {
	t.Helper()
	h, err := sb.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	return h
}

func wait(t testing.TB, h sandbox.Handle) sandbox.Exit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return e
}

// run starts spec, waits for it and returns its exit and log streams.
func run(t testing.TB, spec sandbox.Spec) (sandbox.Exit, map[runlog.Stream][]byte) {
	t.Helper()
	e := wait(t, start(t, newSandbox(process.Options{}), spec))
	return e, streams(t, spec.LogPath)
}

func streams(t testing.TB, path string) map[runlog.Stream][]byte {
	t.Helper()
	out := map[runlog.Stream][]byte{}
	err := runlog.ReadAll(path, func(r runlog.Record) error {
		out[r.Stream] = append(out[r.Stream], r.Data...)
		return nil
	})
	if err != nil {
		t.Fatalf("read log: %v", err)
	}
	return out
}

// waitFor polls cond (a file appearing, a log growing: things with no
// channel to wait on) until it holds or a minute passes.
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// alive reports whether pid is a live (non-zombie) process.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && i+2 < len(b) && b[i+2] != 'Z' && b[i+2] != 'X'
}

// readPids reads the pids a test script recorded, one per line.
func readPids(t testing.TB, path string) []int {
	t.Helper()
	b, _ := os.ReadFile(path)
	var pids []int
	for _, f := range strings.Fields(string(b)) {
		p, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("bad pid %q in %s", f, path)
		}
		pids = append(pids, p)
	}
	return pids
}

// zombies lists this process's children that have exited but were not reaped.
func zombies(t testing.TB) []int {
	t.Helper()
	tasks, _ := filepath.Glob("/proc/self/task/*/children")
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			pid, _ := strconv.Atoi(s)
			st, _ := os.ReadFile("/proc/" + s + "/stat")
			if i := bytes.LastIndexByte(st, ')'); i > 0 && i+2 < len(st) && st[i+2] == 'Z' {
				out = append(out, pid)
			}
		}
	}
	return out
}

func killAndReap(t testing.TB, cmd *exec.Cmd) {
	t.Helper()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var ee *exec.ExitError
	if err := cmd.Wait(); err != nil && !errors.As(err, &ee) {
		t.Fatal(err)
	}
}
