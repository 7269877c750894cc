package slurm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// helperEnv makes the test binary a "daemon" that submits one run and
// then follows it until killed (see TestRecoverAfterKill).
const helperEnv = "RUNBOX_SLURM_TEST_HELPER"

func TestMain(m *testing.M) {
	if spec := os.Getenv(helperEnv); spec != "" {
		os.Exit(helperMain(spec))
	}
	os.Exit(m.Run())
}

func helperMain(specJSON string) int {
	if strings.HasPrefix(specJSON, "[") {
		return helperArray(specJSON)
	}
	var spec sandbox.Spec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	h, err := New(Options{Poll: 100 * time.Millisecond}).Start(context.Background(), spec)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(h.Ref())
	time.Sleep(time.Hour) // follow output until SIGKILLed
	return 0
}

// needSlurm skips without a reachable Slurm controller, or fails when
// RUNBOX_REQUIRE_SLURM=1 (CI brings one up with .ci/slurm-up.sh). A
// controller that is busy or restarting is waited for (bounded), not
// sampled once.
func needSlurm(t *testing.T) *Sandbox {
	t.Helper()
	return needCluster(t, New(Options{Poll: 100 * time.Millisecond}))
}

func needCluster(t *testing.T, sb *Sandbox) *Sandbox {
	t.Helper()
	const env = "RUNBOX_REQUIRE_SLURM"
	err := testwait.For("the Slurm controller", testwait.Budget(env), func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if h := sb.Health(ctx); !h.Available {
			return errors.New(h.Detail)
		}
		return nil
	})
	if err != nil {
		if testwait.Required(env) {
			t.Fatalf("slurm required (%s=1): %v", env, err)
		}
		t.Skipf("no Slurm cluster: %v (run .ci/slurm-up.sh as root)", err)
	}
	return sb
}

// testSpec is a run of sh -c script in fresh dirs (under /tmp, which the
// single-node cluster shares with the test).
func testSpec(t *testing.T, script string) sandbox.Spec {
	t.Helper()
	dir := t.TempDir()
	id := fmt.Sprintf("t%d", time.Now().UnixNano())
	os.MkdirAll(filepath.Join(dir, "ws"), 0o755)
	return sandbox.Spec{
		RunID: id, Command: []string{"sh", "-c", script},
		Workdir: filepath.Join(dir, "ws"), LogPath: filepath.Join(dir, "output.log"),
		StateDir: filepath.Join(dir, "state"), CleanEnv: true,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin"}, Grace: 2 * time.Second,
	}
}

func start(t *testing.T, sb *Sandbox, spec sandbox.Spec) sandbox.Handle {
	t.Helper()
	h, err := sb.Start(context.Background(), spec)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { h.Stop(context.Background(), time.Second) })
	return h
}

func wait(t *testing.T, h sandbox.Handle, d time.Duration) sandbox.Exit {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	e, err := h.Wait(ctx)
	if err != nil {
		t.Fatalf("wait: %v", err)
	}
	return e
}

// streams reads the log back, one string per stream.
func streams(t *testing.T, path string) map[runlog.Stream]string {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return map[runlog.Stream]string{}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[runlog.Stream]*bytes.Buffer{}
	r := runlog.NewReader(f, 0)
	for {
		rec, err := r.Next()
		if err != nil {
			break
		}
		if out[rec.Stream] == nil {
			out[rec.Stream] = &bytes.Buffer{}
		}
		out[rec.Stream].Write(rec.Data)
	}
	m := map[runlog.Stream]string{}
	for s, b := range out {
		m[s] = b.String()
	}
	return m
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// liveJob reports whether squeue still lists job id as not finished.
func liveJob(t *testing.T, ref string) bool {
	t.Helper()
	id := strings.TrimPrefix(ref, "slurm:")
	out, _ := exec.Command("squeue", "-h", "-j", id, "-o", "%T").Output()
	s := strings.TrimSpace(string(out))
	return s != "" && !terminal[s] && s != "COMPLETING"
}

// procWith reports whether any process's command line contains marker.
func procWith(marker string) bool {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			return true
		}
	}
	return false
}

// helperArray is helperMain for the runs of one job array: each is
// started at once, as the engine's runners do.
func helperArray(specsJSON string) int {
	var specs []sandbox.Spec
	if err := json.Unmarshal([]byte(specsJSON), &specs); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	sb := New(Options{Poll: 100 * time.Millisecond})
	for _, spec := range specs {
		go func() {
			h, err := sb.Start(context.Background(), spec)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
			fmt.Println(h.Ref())
		}()
	}
	time.Sleep(time.Hour) // follow output until SIGKILLed
	return 0
}
