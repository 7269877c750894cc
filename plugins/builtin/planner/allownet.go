package planner

import (
	"net/url"
	"path"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// The hosts a command needs, for --allow-net: what it installs, clones,
// downloads and loads. They are read where the analysis already reads
// commands (shellWords: the command, shell scripts, a Python script's
// shell calls) and Python's network calls (pyNetwork), so prose,
// comments and docstrings propose nothing. Each host comes with its
// reason. A plan with a critical risk proposes none: it runs under full
// isolation until someone has read it.

// pypiHosts are the Python package index and where its files download from.
var pypiHosts = []string{"pypi.org", "files.pythonhosted.org"}

// hubHosts are where Hugging Face downloads come from: the hub, and its
// CDNs for large files (LFS, Xet).
var hubHosts = []string{"huggingface.co", "*.huggingface.co", "*.hf.co"}

// allowNet is the proposal, empty under a critical risk.
func (a *analysis) allowNet() []sdk.AllowHost {
	if a.maxRisk() == severityRank[sdk.SeverityCritical] {
		return nil
	}
	return a.allow
}

func (a *analysis) propose(host, reason string) {
	host = strings.ToLower(host)
	if host == "" || a.allowSeen[host] {
		return
	}
	if a.allowSeen == nil {
		a.allowSeen = map[string]bool{}
	}
	a.allowSeen[host] = true
	a.allow = append(a.allow, sdk.AllowHost{Host: host, Reason: reason})
}

// netWords proposes the hosts one shell command (its words) needs.
func (a *analysis) netWords(words []string) {
	if len(words) == 0 {
		return
	}
	base := path.Base(words[0])
	args := words[1:]
	if strings.HasPrefix(base, "python") && len(args) >= 2 && args[0] == "-m" {
		base, args = args[1], args[2:]
	}
	if base == "uv" && len(args) > 0 && args[0] == "pip" {
		base, args = "pip", args[1:]
	}
	line := clip(strings.Join(words, " "), 80)
	switch base {
	case "pip", "pip3", "uv", "poetry", "pdm", "pipx", "conda", "mamba":
		if len(args) == 0 || !(args[0] == "install" || args[0] == "add" || args[0] == "sync" || args[0] == "download") {
			return
		}
		if base == "conda" || base == "mamba" {
			a.propose("conda.anaconda.org", "conda install ("+line+"): the conda channels")
			a.propose("repo.anaconda.com", "conda install: the defaults channel")
			return
		}
		custom, extra := false, false
		for i, w := range args {
			flag, val, hasVal := strings.Cut(w, "=")
			switch flag {
			case "-i", "--index-url", "--extra-index-url", "--index", "--default-index":
				if !hasVal && i+1 < len(args) {
					val = args[i+1]
				}
				if h := urlHost(val); h != "" {
					a.propose(h, "the package index "+val+" ("+flag+")")
					if flag == "--extra-index-url" || flag == "--index" {
						extra = true
					} else {
						custom = true
					}
				}
			case "-f", "--find-links":
				if !hasVal && i+1 < len(args) {
					val = args[i+1]
				}
				if h := urlHost(val); h != "" {
					a.propose(h, "packages found at "+val+" (--find-links)")
				}
			}
		}
		if !custom || extra {
			a.propose(pypiHosts[0], "package install ("+line+"): the Python package index")
			a.propose(pypiHosts[1], "package install: where the index's files download from")
		}
	case "git":
		if len(args) == 0 || args[0] != "clone" {
			return
		}
		for _, w := range args[1:] {
			if h := urlHost(w); h != "" {
				a.propose(h, "git clone "+w)
				return
			}
		}
	case "curl", "wget", "aria2c", "http", "xh":
		for _, w := range args {
			if h := urlHost(w); h != "" {
				a.propose(h, base+" "+w)
			}
		}
	case "huggingface-cli", "hf":
		if len(args) > 0 && args[0] == "download" {
			for _, h := range hubHosts {
				a.propose(h, "Hugging Face hub download ("+line+")")
			}
		}
	}
}

// netPy proposes what a Python network call needs: call is the matched
// call (from_pretrained(, requests.get(, ...), arg its first argument's
// literal value when it has one.
func (a *analysis) netPy(call, arg, ev string) {
	switch {
	case strings.Contains(call, "from_pretrained"), strings.Contains(call, "load_dataset"),
		strings.Contains(call, "hf_hub_download"), strings.Contains(call, "snapshot_download"),
		strings.Contains(call, "SentenceTransformer"), strings.Contains(call, "pretrained"):
		for _, h := range hubHosts {
			a.propose(h, "Hugging Face hub download ("+ev+")")
		}
	case strings.Contains(call, "torch.hub"):
		a.propose("github.com", "torch.hub.load fetches the repository ("+ev+")")
		a.propose("download.pytorch.org", "torch.hub weights ("+ev+")")
	case strings.Contains(call, "wandb.init"):
		a.propose("api.wandb.ai", "wandb.init logs to Weights & Biases ("+ev+")")
	default:
		if h := urlHost(arg); h != "" {
			a.propose(h, "request to "+arg+" ("+ev+")")
		}
	}
}

// urlHost is the host (with :PORT unless 80/443) of an http(s) URL; ""
// for anything else: an scp-like git address (ssh, which the egress proxy
// does not carry) or a literal address (--allow-net takes names).
func urlHost(raw string) string {
	raw = strings.Trim(raw, `'"`)
	if !strings.HasPrefix(raw, "http://") && !strings.HasPrefix(raw, "https://") {
		return ""
	}
	u, err := url.Parse(strings.TrimRight(raw, ".,;)"))
	if err != nil || u.Hostname() == "" {
		return ""
	}
	if strings.Trim(u.Hostname(), "0123456789.:[]abcdef") == "" && strings.ContainsAny(u.Hostname(), ".:") && !strings.ContainsAny(u.Hostname(), "ghijklmnopqrstuvwxyz") {
		return "" // a literal address
	}
	if !strings.Contains(u.Hostname(), ".") {
		return "" // a bare name ("x", "localhost"): nothing a run should need to reach
	}
	if p := u.Port(); p != "" && p != "80" && p != "443" {
		return u.Hostname() + ":" + p
	}
	return u.Hostname()
}
