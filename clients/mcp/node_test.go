package mcp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/api/client"
)

// requireNode is set in CI, where node and the test's npm packages are
// installed (.ci/run): there the Node test must run, not skip.
var requireNode = os.Getenv("RUNBOX_REQUIRE_NODE") == "1"

func skipOrFail(t *testing.T, format string, a ...any) {
	t.Helper()
	if requireNode {
		t.Fatalf(format, a...)
	}
	t.Skipf(format, a...)
}

// needNode is what a test driving `runbox mcp` from Node needs: node,
// and bin/runbox and bin/runboxd from make build. It returns node's path
// and bin/runbox's.
func needNode(t *testing.T) (node, bin string) {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node not installed (RUNBOX_REQUIRE_NODE=1 makes this a failure)")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(root, "bin", "runbox")
	for _, b := range []string{bin, filepath.Join(root, "bin", "runboxd")} {
		if _, err := os.Stat(b); err != nil {
			skipOrFail(t, "%s is missing: run make build first", b)
		}
	}
	return node, bin
}

// An independent client: the official TypeScript SDK drives the real
// `runbox mcp` (bin/runbox from `make build`, which hands it to runboxd,
// whose daemon has the built-in plugins) through the whole flow; see
// testdata/node/flow.mjs.
func TestNodeClient(t *testing.T) {
	node, bin := needNode(t)
	if _, err := exec.LookPath("python3"); err != nil {
		skipOrFail(t, "python3 not installed")
	}
	dir := filepath.Join("testdata", "node")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		skipOrFail(t, "the Node test's packages are not installed: run npm ci in %s", dir)
	}
	// A short home: the daemon's socket lives in it.
	home, err := os.MkdirTemp("", "rbn")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	t.Cleanup(func() { stopDaemonIn(t, home) })
	workdir := t.TempDir()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "flow.mjs")
	cmd.Dir = dir
	cmd.Env = append(withoutEnv(os.Environ(), "RUNBOX_SOCKET", "RUNBOX_HOME"),
		"RUNBOX_BIN="+bin, "RUNBOX_HOME="+home, "WORKDIR="+workdir)
	out, err := cmd.CombinedOutput()
	t.Logf("%s", out)
	if err != nil {
		if b, _ := os.ReadFile(filepath.Join(home, "daemon.log")); len(b) > 0 {
			t.Logf("daemon.log:\n%s", b)
		}
		t.Fatalf("node flow: %v", err)
	}
	if !strings.Contains(string(out), "node flow: all checks passed") {
		t.Fatal("node flow did not finish")
	}
}

// stopDaemonIn ends the daemon `runbox mcp` started for home, if any.
func stopDaemonIn(t testing.TB, home string) {
	c := client.New(client.Options{Home: home, Socket: filepath.Join(home, "runbox.sock")})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	h, err := c.Health(ctx)
	if err != nil {
		return
	}
	_ = syscall.Kill(h.PID, syscall.SIGTERM)
	for range 100 {
		if syscall.Kill(h.PID, 0) != nil {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("daemon %d did not exit on SIGTERM", h.PID)
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, n := range names {
			keep = keep && k != n
		}
		if keep {
			out = append(out, kv)
		}
	}
	return out
}
