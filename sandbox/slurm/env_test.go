package slurm

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sandbox/runlog"
)

// The env file, read by a real sh, sets each value exactly (quotes,
// newlines, $), and leaves what the job already has (Slurm's own
// variables, its CUDA_VISIBLE_DEVICES) as Slurm set it.
func TestEnvFileSetsValuesExactly(t *testing.T) {
	vals := []string{"HF_TOKEN=hf_abc'def\"g$HOME`x`\nline2", "PLAIN=1", "EMPTY=", "CUDA_VISIBLE_DEVICES=7"}
	sb, file := splitEnv(append(vals, "SLURM_CONF=/etc/x.conf", "SBATCH_PARTITION=gpu", "odd-name=1", "NOEQUALS"))
	if want := []string{"SLURM_CONF=/etc/x.conf", "SBATCH_PARTITION=gpu", "odd-name=1"}; !slices.Equal(sb, want) {
		t.Fatalf("sbatch env %q, want %q", sb, want)
	}
	if !slices.Equal(file, vals) {
		t.Fatalf("file env %q, want %q", file, vals)
	}
	if sb, _ := splitEnv([]string{"A=1"}); sb == nil {
		t.Fatal("an empty sbatch env must not be nil (exec would pass the daemon's)")
	}
	p := filepath.Join(t.TempDir(), envFile)
	if err := writePrivate(p, envScript(file)); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o600 {
		t.Fatalf("env file mode %v", st.Mode())
	}
	cmd := exec.Command("sh", "-c", `. "$1" && printf '%s\0' "$HF_TOKEN" "$PLAIN" "${EMPTY-unset}" "$CUDA_VISIBLE_DEVICES"`, "sh", p)
	cmd.Env = []string{"CUDA_VISIBLE_DEVICES=0"} // as Slurm sets it for the job's GPU
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\x00"), "\x00")
	want := []string{"hf_abc'def\"g$HOME`x`\nline2", "1", "", "0"}
	if !slices.Equal(got, want) {
		t.Fatalf("sh read %q, want %q", got, want)
	}
}

// slurmDirs are the directories Slurm keeps job state in on this host.
func slurmDirs(t *testing.T) []string {
	out, err := exec.Command("scontrol", "show", "config").Output()
	if err != nil {
		t.Fatalf("scontrol show config: %v", err)
	}
	var dirs []string
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if ok && (k == "StateSaveLocation" || k == "SlurmdSpoolDir") && filepath.IsAbs(v) {
			dirs = append(dirs, v)
		}
	}
	if len(dirs) == 0 {
		t.Fatalf("no StateSaveLocation in scontrol show config")
	}
	return dirs
}

// grepDirs returns the files under dirs holding s; unreadable files are
// the test's to report (it cannot prove absence there).
func grepDirs(t *testing.T, dirs []string, s string) (found []string) {
	t.Helper()
	for _, d := range dirs {
		filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err != nil {
				if os.IsPermission(err) {
					needReadable(t, p, err)
				}
				return nil
			}
			if !e.Type().IsRegular() {
				return nil
			}
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // slurmctld renamed or removed it while we walked (node_state.new)
			}
			if err != nil {
				needReadable(t, p, err)
				return nil
			}
			if bytes.Contains(b, []byte(s)) {
				found = append(found, p)
			}
			return nil
		})
	}
	return found
}

func needReadable(t *testing.T, p string, err error) {
	t.Helper()
	if os.Getenv("RUNBOX_REQUIRE_SLURM") == "1" {
		t.Fatalf("cannot read Slurm's state to check it (%v): run as root or SlurmUser", err)
	}
	t.Skipf("cannot read Slurm's state to check it (%v)", err)
}

func secretValue(t *testing.T) string {
	b := make([]byte, 12)
	rand.Read(b)
	return "sv" + hex.EncodeToString(b)
}

// A run's env never reaches Slurm's state: the job sees HF_TOKEN, while no
// file under StateSaveLocation or SlurmdSpoolDir holds its value during the
// job, and the env file is gone once the run ends. The baseline: the
// same value in sbatch's exported environment is found there.
func TestSecretEnvNotInSlurmState(t *testing.T) {
	sb := needSlurm(t)
	dirs := slurmDirs(t)

	// Baseline: the way runbox passed env before. The grep finds it.
	leaked := secretValue(t)
	base := testSpec(t, "")
	os.MkdirAll(base.StateDir, 0o700)
	cmd := exec.Command("sbatch", "--parsable", "--export=ALL", "--output=/dev/null", "--chdir="+base.Workdir, "--wrap=sleep 60")
	cmd.Env = append(os.Environ(), "HF_TOKEN="+leaked)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("baseline sbatch: %v", err)
	}
	baseID := strings.TrimSpace(strings.Split(string(out), ";")[0])
	defer exec.Command("scancel", baseID).Run()
	eventually(t, 30*time.Second, "the baseline job's env in Slurm's state", func() bool { return len(grepDirs(t, dirs, leaked)) > 0 })

	secret := secretValue(t)
	spec := testSpec(t, `echo "seen:$HF_TOKEN:$GITHUB_PAT"; while [ ! -e go ]; do sleep 0.2; done`)
	spec.Env = append(spec.Env, "HF_TOKEN="+secret, "GITHUB_PAT="+secret+"p")
	h := start(t, sb, spec)
	eventually(t, 90*time.Second, "the job's output", func() bool {
		return strings.Contains(streams(t, spec.LogPath)[runlog.Stdout], "seen:")
	})
	if got, want := streams(t, spec.LogPath)[runlog.Stdout], "seen:"+secret+":"+secret+"p\n"; got != want {
		t.Fatalf("the job saw %q, want %q", got, want)
	}
	if found := grepDirs(t, dirs, secret); len(found) > 0 {
		t.Fatalf("the secret is in Slurm's state: %q", found)
	}
	if b, _ := os.ReadFile(filepath.Join(spec.StateDir, scriptFile)); bytes.Contains(b, []byte(secret)) {
		t.Fatal("the batch script holds the secret")
	}
	os.WriteFile(filepath.Join(spec.Workdir, "go"), nil, 0o644)
	if e := wait(t, h, time.Minute); e.Code != 0 {
		t.Fatalf("exit %+v", e)
	}
	if _, err := os.Stat(filepath.Join(spec.StateDir, envFile)); !os.IsNotExist(err) {
		t.Fatalf("the env file outlived the run: %v", err)
	}
	if found := grepDirs(t, dirs, secret); len(found) > 0 {
		t.Fatalf("after the run, the secret is in Slurm's state: %q", found)
	}
}
