package planner

import (
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/sdk"
)

func TestPatho(t *testing.T) {
	inputs := map[string]string{
		"parens":      "f(" + strings.Repeat("p.add_argument('--x', ", 20000),
		"typer":       "def m(" + strings.Repeat("a: bool = typer.Option(False), ", 20000),
		"shellcont":   strings.Repeat("echo a \\\n", 20000),
		"quotes":      strings.Repeat("'", 200000),
		"triple":      strings.Repeat(`"""`, 100000),
		"open":        strings.Repeat("open('/etc/x', 'w') + ", 20000),
		"envs":        strings.Repeat("os.environ['TOKEN'] + ", 20000),
		"rmtree":      "x = [" + strings.Repeat("shutil.rmtree('/'), ", 20000),
		"system":      "x = [" + strings.Repeat("os.system('rm -rf /'), ", 20000),
		"execs":       "x = [" + strings.Repeat("exec(requests.get(u).text), ", 20000),
		"hub":         "x = [" + strings.Repeat("m.from_pretrained('a/b'), ", 20000),
		"abs":         "x = [" + strings.Repeat("flags.DEFINE_bool('a', 1, 'h'), ", 20000),
		"click":       "x = [" + strings.Repeat("click.option('--a'), ", 20000),
		"nested dollar": strings.Repeat("$(", 50000),
	}
	for name, src := range inputs {
		for _, p := range []string{"a.py", "a.sh"} {
			start := time.Now()
			Plan(sdk.PlanInput{Command: []string{"python", p}, ScriptPath: p, ScriptText: src, Host: linuxGPU})
			if d := time.Since(start); d > 200*time.Millisecond {
				t.Errorf("%s %s: %v", name, p, d)
			}
		}
	}
}
