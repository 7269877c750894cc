package slurm

import (
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
)

// cluster is a single-node Slurm cluster of a test's own: a slurmctld and
// a slurmd on free ports, with their own slurm.conf, state, spool, logs and
// pid files under a temporary directory, sharing only munge with the
// machine's cluster. A test that stops a controller stops this one, so the
// shared cluster (.ci/slurm-up.sh) that other packages' tests submit to
// stays up.
type cluster struct {
	dir, conf string
}

// privateCluster brings up a cluster of the test's own, and tears it
// down when the test ends. It needs root (the daemons run as root here,
// as SlurmUser) and Debian's slurmctld and slurmd; it skips without them
// unless RUNBOX_REQUIRE_SLURM=1.
func privateCluster(t *testing.T) (*cluster, *Sandbox) {
	t.Helper()
	const env = "RUNBOX_REQUIRE_SLURM"
	skip := func(why string) {
		t.Helper()
		if testwait.Required(env) {
			t.Fatalf("a private Slurm cluster is required (%s=1): %s", env, why)
		}
		t.Skip(why)
	}
	if os.Getuid() != 0 {
		skip("a private Slurm cluster needs root")
	}
	for _, b := range []string{"slurmctld", "slurmd", "munge"} {
		if _, err := exec.LookPath(b); err != nil {
			skip(b + " is not installed (.ci/slurm-up.sh installs it)")
		}
	}
	if err := testwait.For("munged", testwait.Budget(env), func() error {
		return exec.Command("munge", "-n").Run()
	}); err != nil {
		skip(err.Error())
	}
	dir, err := os.MkdirTemp("", "runbox-slurm-cluster-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{dir: dir, conf: filepath.Join(dir, "slurm.conf")}
	for _, d := range []string{"state", "spool", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ports := freePorts(t, 2)
	// proctrack/linuxproc and task/none: no cgroups, so nothing is shared
	// with the machine's slurmd beyond munge.
	conf := fmt.Sprintf(`ClusterName=runboxtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort=%d
SlurmdPort=%d
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=%[3]s/state
SlurmdSpoolDir=%[3]s/spool
SlurmctldPidFile=%[3]s/slurmctld.pid
SlurmdPidFile=%[3]s/slurmd.pid
SlurmctldLogFile=%[3]s/log/slurmctld.log
SlurmdLogFile=%[3]s/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0
DefMemPerCPU=64
MailProg=/bin/true
MpiDefault=none
ReturnToService=2
MinJobAge=600
KillWait=5
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=testnode NodeAddr=127.0.0.1 Port=%[2]d CPUs=%[4]d RealMemory=1024 State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, ports[0], ports[1], dir, runtime.NumCPU())
	if err := os.WriteFile(c.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.down(t) })
	c.startController(t)
	if out, err := exec.Command("slurmd", "-f", c.conf, "-N", "testnode").CombinedOutput(); err != nil {
		t.Fatalf("start slurmd: %v %s%s", err, out, c.logs())
	}
	sb := New(Options{Poll: 100 * time.Millisecond, Env: []string{"SLURM_CONF=" + c.conf}})
	if err := testwait.For("the private cluster's node to be idle", 60*time.Second, func() error {
		out, err := c.command("sinfo", "-h", "-N", "-o", "%T")
		if err == nil && strings.TrimSpace(out) == "idle" {
			return nil
		}
		return fmt.Errorf("sinfo: %v %s", err, strings.TrimSpace(out))
	}); err != nil {
		t.Fatalf("%v%s", err, c.logs())
	}
	return c, sb
}

// startController starts the cluster's slurmctld (again).
func (c *cluster) startController(t *testing.T) {
	t.Helper()
	if out, err := exec.Command("slurmctld", "-f", c.conf).CombinedOutput(); err != nil {
		t.Fatalf("start slurmctld: %v %s%s", err, out, c.logs())
	}
}

// stopController stops the cluster's slurmctld and waits until it is gone.
func (c *cluster) stopController(t *testing.T) {
	t.Helper()
	if err := stopByPidFile(filepath.Join(c.dir, "slurmctld.pid")); err != nil {
		t.Fatal(err)
	}
}

// command runs a Slurm command against this cluster.
func (c *cluster) command(name string, args ...string) (string, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), "SLURM_CONF="+c.conf)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

// down cancels what is left on the cluster, stops both daemons and removes
// its directory.
func (c *cluster) down(t *testing.T) {
	if _, err := c.command("scancel", "--user=root"); err != nil {
		t.Logf("scancel on the private cluster: %v", err)
	}
	for _, p := range []string{"slurmd.pid", "slurmctld.pid"} {
		if err := stopByPidFile(filepath.Join(c.dir, p)); err != nil {
			t.Errorf("stop the private cluster: %v", err)
		}
	}
	if t.Failed() {
		t.Log(c.logs())
	}
	os.RemoveAll(c.dir)
}

// logs is the tail of both daemons' logs, for a failure message.
func (c *cluster) logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log"} {
		data, _ := os.ReadFile(filepath.Join(c.dir, "log", f))
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		fmt.Fprintf(&b, "\n--- %s (last lines)\n%s", f, strings.Join(lines[max(0, len(lines)-15):], "\n"))
	}
	return b.String()
}

// stopByPidFile sends SIGTERM to the daemon a pid file names and waits
// (bounded) for it to exit; SIGKILL after 15 s. A missing file or a
// process already gone is no error.
func stopByPidFile(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return nil
	}
	if syscall.Kill(pid, syscall.SIGTERM) != nil {
		return nil
	}
	err = testwait.For(fmt.Sprintf("pid %d (%s) to exit", pid, filepath.Base(path)), 15*time.Second, func() error {
		if syscall.Kill(pid, 0) != nil || zombie(pid) {
			return nil
		}
		return fmt.Errorf("still running")
	})
	if err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	os.Remove(path)
	return nil
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(b, ')')
	return i > 0 && len(b) > i+2 && b[i+2] == 'Z'
}

// freePorts returns n TCP ports that were free on loopback a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ls []net.Listener
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		l.Close()
	}
	return ports
}
