package docker

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/runlog"
)

// bigData is written by a setup command and printed by the main one, so
// the host can compare the run log with the file byte for byte: a 3 MB
// line without newline, 20 MB of random bytes (invalid UTF-8, lines of
// any length) and a final fragment without newline.
const bigData = `{ head -c 3000000 /dev/zero | tr '\0' a; head -c 20000000 /dev/urandom; printf 'the end'; } > data`

func TestLargeOutputExact(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "cat data; cat data >&2")
	spec.Setup = []string{bigData}
	ex, out := e.run(t, spec)
	if ex.Code != 0 {
		t.Fatalf("exit %+v", ex)
	}
	want, err := os.ReadFile(filepath.Join(spec.Workdir, "data"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []runlog.Stream{runlog.Stdout, runlog.Stderr} {
		if got := out[s]; sha256.Sum256(got) != sha256.Sum256(want) {
			t.Errorf("%s: %d bytes, want %d; first difference at %d", s, len(got), len(want), firstDiff(got, want))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func TestWorkspaceOwnerAndAssets(t *testing.T) {
	e := setup(t)
	asset := filepath.Join(t.TempDir(), "config.txt")
	os.WriteFile(asset, []byte("asset content\n"), 0o644)
	spec := e.newSpec(t, "sh", "-c", `id -u; id -g; pwd; cat inputs/config.txt; echo new > created; mkdir dir
		echo x > inputs/config.txt 2>/dev/null && echo asset-writable || echo asset-read-only`)
	spec.User = "12345:12345"
	spec.Assets = []sandbox.Asset{{Src: asset, Dst: "inputs/config.txt"}}
	ex, out := e.run(t, spec)
	if ex.Code != 0 {
		t.Fatalf("exit %+v stderr %q", ex, out[runlog.Stderr])
	}
	want := "12345\n12345\n" + WorkspaceMount + "\nasset content\nasset-read-only\n"
	if got := string(out[runlog.Stdout]); got != want {
		t.Errorf("stdout %q, want %q", got, want)
	}
	for _, name := range []string{"created", "dir"} {
		fi, err := os.Stat(filepath.Join(spec.Workdir, name))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if st.Uid != 12345 || st.Gid != 12345 {
			t.Errorf("%s owned by %d:%d, want 12345:12345", name, st.Uid, st.Gid)
		}
	}
}

func TestDefaultUserIsInvoker(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "id -u; id -g")
	_, out := e.run(t, spec)
	if want := fmt.Sprintf("%d\n%d\n", os.Getuid(), os.Getgid()); string(out[runlog.Stdout]) != want {
		t.Errorf("stdout %q, want %q", out[runlog.Stdout], want)
	}
}

func TestEnv(t *testing.T) {
	e := setup(t)
	t.Setenv("RUNBOX_TEST_ALLOWED", "from-host")
	t.Setenv("RUNBOX_TEST_SECRET", "must-not-leak")
	spec := e.newSpec(t, "sh", "-c", `echo "$A|$RUNBOX_TEST_ALLOWED|$RUNBOX_TEST_SECRET"`)
	spec.Env = []string{"A=1"}
	spec.EnvAllow = []string{"RUNBOX_TEST_ALLOWED"}
	_, out := e.run(t, spec)
	if got := string(out[runlog.Stdout]); got != "1|from-host|\n" {
		t.Errorf("stdout %q", got)
	}
}

func TestReadOnlyRoot(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "touch /tmp/ok && echo tmp-ok; touch /etc-x 2>/dev/null && echo root-writable || echo root-read-only")
	spec.ReadOnlyRoot = true
	_, out := e.run(t, spec)
	if got := string(out[runlog.Stdout]); got != "tmp-ok\nroot-read-only\n" {
		t.Errorf("stdout %q", got)
	}
}

// TestNetwork proves "none" has no network by showing the same connection
// succeeds with "bridge": the host listens on all addresses and the
// container dials the bridge gateway.
func TestNetwork(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	gw := bridgeGateway(ctx, t, e)
	// Listen on the bridge's host address and answer with a token, so a
	// connection that reached anything else cannot pass for success.
	ln, err := net.Listen("tcp4", net.JoinHostPort(gw, "0"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	got := make(chan string, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			line, _ := bufio.NewReader(c).ReadString('\n')
			got <- strings.TrimSpace(line)
			fmt.Fprintln(c, "token-from-host")
			c.Close()
		}
	}()
	dial := fmt.Sprintf("echo hello-%%s | nc -w 3 %s %d; echo rc=$?", gw, port)
	for _, tc := range []struct {
		network string
		reached bool
	}{{"", false}, {"none", false}, {"bridge", true}} {
		t.Run("net="+tc.network, func(t *testing.T) {
			spec := e.newSpec(t, "sh", "-c", fmt.Sprintf(dial, tc.network))
			spec.Network = tc.network
			_, out := e.run(t, spec)
			reached := strings.Contains(string(out[runlog.Stdout]), "token-from-host\nrc=0")
			if reached != tc.reached {
				t.Fatalf("reached host = %v, want %v; stdout %q stderr %q", reached, tc.reached, out[runlog.Stdout], out[runlog.Stderr])
			}
			if tc.reached {
				select {
				case line := <-got:
					if line != "hello-bridge" {
						t.Errorf("listener got %q", line)
					}
				case <-time.After(5 * time.Second):
					t.Error("listener got nothing")
				}
			}
		})
	}
	select {
	case line := <-got:
		t.Errorf("listener reached from a container without network: %q", line)
	default:
	}
}

func TestSafetyDefaultsAndLimits(t *testing.T) {
	e := setup(t)
	spec := e.newSpec(t, "sh", "-c", "grep CapEff /proc/self/status")
	spec.Limits = sandbox.Limits{MemoryBytes: 64 << 20, CPUs: 0.5, Pids: 50}
	spec.KeepContainer = true
	ex, out := e.run(t, spec)
	if ex.Code != 0 || !bytes.Contains(out[runlog.Stdout], []byte("0000000000000000")) {
		t.Errorf("exit %+v, capabilities %q", ex, out[runlog.Stdout])
	}
	c, err := e.cli.ContainerInspect(context.Background(), containerName(spec.RunID))
	if err != nil {
		t.Fatal(err)
	}
	hc := c.HostConfig
	if hc.Memory != 64<<20 || hc.MemorySwap != 64<<20 || hc.NanoCPUs != 5e8 || hc.PidsLimit == nil || *hc.PidsLimit != 50 {
		t.Errorf("limits: memory %d swap %d cpus %d pids %v", hc.Memory, hc.MemorySwap, hc.NanoCPUs, hc.PidsLimit)
	}
	if string(hc.NetworkMode) != "none" || len(hc.CapDrop) != 1 || hc.CapDrop[0] != "ALL" ||
		len(hc.SecurityOpt) != 1 || hc.SecurityOpt[0] != "no-new-privileges" {
		t.Errorf("defaults: network %s capdrop %v secopt %v", hc.NetworkMode, hc.CapDrop, hc.SecurityOpt)
	}
	if c.Config.Labels[LabelRunID] != spec.RunID || c.Config.Labels[LabelManaged] != "true" {
		t.Errorf("labels %v", c.Config.Labels)
	}
}

// TestLongLineEdges covers how lines longer than Docker's 16 KiB buffer
// end: with or without a newline, exactly on the buffer boundary, and at
// the very end of a stream, where old daemons' log readers are ambiguous.
func TestLongLineEdges(t *testing.T) {
	e := setup(t)
	gen := func(c byte, n int) string { return fmt.Sprintf("head -c %d /dev/zero | tr '\\0' %c", n, c) }
	for _, tc := range []struct {
		name           string
		stdout, stderr string // shell snippets
		wantOut        string
		wantErr        string
	}{
		{"final-newline", gen('a', 40000) + "; echo", gen('b', 40000),
			strings.Repeat("a", 40000) + "\n", strings.Repeat("b", 40000)},
		{"boundary", gen('c', 32768) + "; echo", gen('d', 16384),
			strings.Repeat("c", 32768) + "\n", strings.Repeat("d", 16384)},
		{"middle", gen('e', 20000) + "; echo; echo next; " + gen('f', 17000), "echo x; " + gen('g', 50000) + "; printf '\\n\\n'; echo y",
			strings.Repeat("e", 20000) + "\nnext\n" + strings.Repeat("f", 17000), "x\n" + strings.Repeat("g", 50000) + "\n\ny\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := e.newSpec(t, "sh", "-c", fmt.Sprintf("{ %s; } ; { %s; } >&2", tc.stdout, tc.stderr))
			_, out := e.run(t, spec)
			if got := string(out[runlog.Stdout]); got != tc.wantOut {
				t.Errorf("stdout: %d bytes ending %q, want %d ending %q", len(got), tailOf(got), len(tc.wantOut), tailOf(tc.wantOut))
			}
			if got := string(out[runlog.Stderr]); got != tc.wantErr {
				t.Errorf("stderr: %d bytes ending %q, want %d ending %q", len(got), tailOf(got), len(tc.wantErr), tailOf(tc.wantErr))
			}
		})
	}
}

func tailOf(s string) string { return s[max(0, len(s)-8):] }

// bridgeGateway is the host's address on Docker's default bridge: the
// network's IPAM gateway, else the docker0 interface's IPv4 address.
func bridgeGateway(ctx context.Context, t *testing.T, e env) string {
	nw, err := e.cli.NetworkInspect(ctx, "bridge", networkInspectOptions())
	if err != nil {
		t.Skipf("no bridge network: %v", err)
	}
	for _, c := range nw.IPAM.Config {
		if c.Gateway != "" {
			return c.Gateway
		}
	}
	name := nw.Options["com.docker.network.bridge.name"]
	if name == "" {
		name = "docker0"
	}
	ifc, err := net.InterfaceByName(name)
	if err != nil {
		t.Skipf("no bridge gateway: %v", err)
	}
	addrs, _ := ifc.Addrs()
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
			return ipn.IP.String()
		}
	}
	t.Skipf("no IPv4 address on %s", name)
	return ""
}
