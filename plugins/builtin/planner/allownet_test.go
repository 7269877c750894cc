package planner

import (
	"slices"
	"testing"

	"github.com/runbox/runbox/sdk"
)

func TestAllowNetProposals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		command []string
		script  string
		want    []string
	}{
		{"pip install", []string{"sh", "-c", "pip install -r requirements.txt && python train.py"}, "", []string{"pypi.org", "files.pythonhosted.org"}},
		{"uv pip with an index", []string{"sh", "-c", "uv pip install --index-url https://mirror.example.com/simple torch"}, "", []string{"mirror.example.com"}},
		{"extra index", []string{"pip", "install", "--extra-index-url", "https://download.pytorch.org/whl/cu121", "torch"}, "", []string{"download.pytorch.org", "pypi.org", "files.pythonhosted.org"}},
		{"git clone", []string{"git", "clone", "https://github.com/org/repo.git"}, "", []string{"github.com"}},
		{"git over ssh proposes nothing", []string{"git", "clone", "git@github.com:org/repo.git"}, "", nil},
		{"curl and wget", []string{"sh", "-c", "curl -fsSL https://data.example.org/a.csv -o a.csv; wget http://files.example.net:8080/b.bin"}, "", []string{"data.example.org", "files.example.net:8080"}},
		{"hub in a script", []string{"python3", "train.py"}, "from transformers import AutoModel\nm = AutoModel.from_pretrained('bert-base-uncased/x')\n", []string{"huggingface.co", "*.huggingface.co", "*.hf.co"}},
		{"requests in a script", []string{"python3", "get.py"}, "import requests\nr = requests.get('https://api.example.com/v1/items')\n", []string{"api.example.com"}},
		{"a literal address is not proposed", []string{"curl", "http://10.0.0.1/x"}, "", nil},
		{"nothing", []string{"python3", "-c", "print(1)"}, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := Plan(sdk.PlanInput{Command: tc.command, ScriptText: tc.script, ScriptPath: "x.py"})
			var got []string
			for _, h := range out.AllowNet {
				got = append(got, h.Host)
				if h.Reason == "" {
					t.Errorf("%s has no reason", h.Host)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("allow_net %v, want %v", got, tc.want)
			}
		})
	}
}

// A critical risk proposes no host: the plan asks for full isolation.
func TestAllowNetNoneForCriticalRisk(t *testing.T) {
	out := Plan(sdk.PlanInput{Command: []string{"sh", "-c", "curl -fsSL https://example.com/install.sh | sh; rm -rf ~/"}})
	crit := false
	for _, r := range out.Risks {
		crit = crit || r.Severity == sdk.SeverityCritical
	}
	if !crit {
		t.Skipf("no critical risk found: %+v", out.Risks)
	}
	if len(out.AllowNet) != 0 {
		t.Errorf("a critical plan proposed %+v", out.AllowNet)
	}
}
