package planner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/runbox/runbox/sdk"
)

func TestSmokeFlags(t *testing.T) {
	tests := []struct {
		name   string
		script string // file name decides the language
		src    string
		cmd    []string // default: python/bash + script
		want   string   // appended arguments, space-joined; "" = no smoke
	}{
		{"argparse single quotes short first", "a.py", "p.add_argument('-n', '--dry-run', action='store_true')\n", nil, "--dry-run"},
		{"argparse dest only short", "a.py", "p.add_argument('-d', dest='dry_run', action='store_true')\n", nil, "-d"},
		{"argparse boolean optional", "a.py", "import argparse\np.add_argument('--smoke', action=argparse.BooleanOptionalAction)\n", nil, "--smoke"},
		{"argparse smoke with int value", "a.py", "p.add_argument('--smoke', type=int, default=0)\n", nil, "--smoke 1"},
		{"optparse", "a.py", "parser.add_option('--dry-run', action='store_true', dest='dry')\n", nil, "--dry-run"},
		{"explicit beats generic", "a.py", "p.add_argument('--max-steps', type=int)\np.add_argument('--quick', action='store_true')\np.add_argument('--dry_run', action='store_true')\n", nil, "--dry_run"},
		{"max_steps float is not a smoke", "a.py", "p.add_argument('--max_steps', type=float)\n", nil, ""},
		{"max_iters value", "a.py", "p.add_argument('--max_iters', type=int, default=600000)\n", nil, "--max_iters 2"},
		{"limit batches", "a.py", "p.add_argument('--limit-train-batches', type=int)\n", nil, "--limit-train-batches 2"},
		{"max samples", "a.py", "p.add_argument('--max_train_samples', type=int)\n", nil, "--max_train_samples 16"},
		{"debug verbose is not a smoke", "a.py", "p.add_argument('--debug', action='store_true', help='verbose logs')\n", nil, ""},
		{"debug quick is a smoke", "a.py", "p.add_argument('--debug', action='store_true', help='quick run on a tiny subset')\n", nil, "--debug"},
		{"validate during training is not", "a.py", "p.add_argument('--validate', action='store_true', help='evaluate the checkpoint during training')\n", nil, ""},
		{"validate only", "a.py", "p.add_argument('--validate-only', action='store_true')\n", nil, "--validate-only"},
		{"no- flag is not", "a.py", "p.add_argument('--no-smoke', action='store_true')\n", nil, ""},
		{"store_false is not", "a.py", "p.add_argument('--dry-run', action='store_false', dest='apply')\n", nil, ""},
		{"wired to fast_dev_run", "a.py", "p.add_argument('--check', action='store_true')\nargs = p.parse_args()\ntrainer = pl.Trainer(fast_dev_run=args.check)\n", nil, "--check"},
		{"add_argparse_args", "a.py", "parser = pl.Trainer.add_argparse_args(parser)\n", nil, "--fast_dev_run 1"},
		{"click short and long", "a.py", "@click.option('-n', '--dry-run', is_flag=True)\n", nil, "--dry-run"},
		{"click validate toggle", "a.py", "@click.option('--validate/--no-validate', default=False, help='check inputs only')\n", nil, "--validate"},
		{"typer default param name", "a.py", "def main(smoke_test: bool = typer.Option(False, help='tiny run')):\n    pass\n", nil, "--smoke-test"},
		{"absl bool", "a.py", "flags.DEFINE_bool('dry_run', False, 'print only')\n", nil, "--dry_run"},
		{"absl integer steps", "a.py", "flags.DEFINE_integer('max_steps', 100000, 'steps')\n", nil, "--max_steps 2"},
		{"already present", "a.py", "p.add_argument('--dry-run', action='store_true')\n", []string{"python", "a.py", "--dry-run"}, ""},
		{"value flag present skips to next", "a.py", "p.add_argument('--max-steps', type=int)\np.add_argument('--smoke', action='store_true')\n", []string{"python", "a.py", "--max-steps=1000"}, "--smoke"},
		{"sh -c appends inside", "a.py", "p.add_argument('--smoke', action='store_true')\n", []string{"sh", "-c", "cd x && python a.py"}, ""},
		{"none", "a.py", "import sys\nprint(sys.argv)\n", nil, ""},
		{"shell case", "b.sh", "case $1 in\n  --smoke) SMOKE=1 ;;\nesac\n", nil, "--smoke"},
		{"shell case eq form", "b.sh", "for a in \"$@\"; do case $a in\n  --max-steps=*) STEPS=\"${a#*=}\" ;;\nesac; done\n", nil, "--max-steps=2"},
		{"shell getopts", "b.sh", "while getopts \"nv\" opt; do\n  case $opt in\n    n) DRY_RUN=1 ;;\n    v) VERBOSE=1 ;;\n  esac\ndone\n", nil, "-n"},
		{"shell test", "b.sh", "if [[ \"$1\" == \"--dry-run\" ]]; then DRY=1; fi\n", nil, "--dry-run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := tt.cmd
			if cmd == nil {
				cmd = []string{"python", tt.script}
				if strings.HasSuffix(tt.script, ".sh") {
					cmd = []string{"bash", tt.script}
				}
			}
			out := Plan(sdk.PlanInput{Command: cmd, ScriptPath: tt.script, ScriptText: tt.src, Host: linuxDocker})
			if tt.name == "sh -c appends inside" {
				if out.Smoke == nil || out.Smoke.Command[2] != "cd x && python a.py --smoke" {
					t.Fatalf("smoke = %+v", out.Smoke)
				}
				return
			}
			got := ""
			if out.Smoke != nil {
				got = strings.Join(out.Smoke.Command[len(cmd):], " ")
				if !strings.HasPrefix(got, out.Smoke.Flag) {
					t.Errorf("flag %q is not what the command appends (%q)", out.Smoke.Flag, got)
				}
			}
			if got != tt.want {
				t.Errorf("smoke appends %q, want %q (smoke %+v, notes %q)", got, tt.want, out.Smoke, out.Notes)
			}
			if tt.want == "" && len(out.Notes) == 0 {
				t.Errorf("no smoke and no note saying why")
			}
		})
	}
}

func TestPyStatements(t *testing.T) {
	src := "x = 1  # rm -rf /\n" +
		"\"\"\"doc\nstring\"\"\"\n" +
		"p.add_argument(\n    \"--a\",  # comment\n    help='it''s',\n)\n" +
		"y = 'a#b'; z = 2\n" +
		"s = \\\n  3\n"
	got := pyStatements(src)
	want := []stmt{
		{Line: 1, Code: "x = 1"},
		{Line: 4, Code: `p.add_argument(     "--a",       help='it''s', )`},
		{Line: 8, Code: "y = 'a#b'"},
		{Line: 8, Code: "z = 2"},
		{Line: 9, Code: "s =    3"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d statements: %+v", len(got), got)
	}
	for i := range want {
		if got[i].Line != want[i].Line || got[i].Code != want[i].Code || len(got[i].Bare) != len(got[i].Code) {
			t.Errorf("stmt %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got[2].Bare != "y = '___'" {
		t.Errorf("bare = %q", got[2].Bare)
	}
}

func FuzzPlan(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "*.*"))
	for _, p := range files {
		if b, err := os.ReadFile(p); err == nil {
			f.Add(filepath.Base(p), string(b), "python "+filepath.Base(p))
		}
	}
	f.Add("x.py", "p.add_argument('--smoke", "bash -c 'rm -rf /")
	f.Add("x.py", "\"\"\"unterminated", "sh -c \"$(curl")
	f.Add("x.sh", "case $1 in\n--dry-run) ;;", "rm -rf ~ | sh")
	f.Fuzz(func(t *testing.T, name, script, cmd string) {
		in := sdk.PlanInput{Command: strings.Fields(cmd), ScriptPath: name, ScriptText: script, Workdir: "/w",
			Host: linuxGPU, Experience: &sdk.Experience{Runs: 1, MaxPeakRSSBytes: 1 << 30, LastFailure: &sdk.Failure{Code: "CUDA_OOM"}}}
		out := Plan(in)
		if out.Smoke != nil && (out.Smoke.Flag == "" || len(out.Smoke.Command) <= len(in.Command)) {
			t.Errorf("bad smoke %+v", out.Smoke)
		}
		for _, r := range out.Risks {
			if _, ok := severityRank[r.Severity]; !ok || r.Code == "" {
				t.Errorf("bad risk %+v", r)
			}
		}
	})
}

// BenchmarkPlan500 plans a realistic 500-line training script.
func BenchmarkPlan500(b *testing.B) {
	var lines []string
	for _, name := range []string{"train_max_steps.py", "agent_risky.py", "lightning_fast_dev_run.py", "argparse_dryrun.py", "docs_only.py"} {
		src, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			b.Fatal(err)
		}
		lines = append(lines, strings.Split(string(src), "\n")...)
	}
	for len(lines) < 500 {
		lines = append(lines, lines...)
	}
	script := strings.Join(lines[:500], "\n")
	in := sdk.PlanInput{Command: []string{"python", "train.py", "--epochs", "3"}, ScriptPath: "train.py", ScriptText: script, Host: linuxGPU}
	b.SetBytes(int64(len(script)))
	b.ReportAllocs()
	for b.Loop() {
		Plan(in)
	}
}
