package planner

import (
	"regexp"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// networkModules are imports that mean the script talks to the network.
var networkModules = map[string]bool{
	"requests": true, "httpx": true, "aiohttp": true, "urllib3": true, "urllib.request": true,
	"socket": true, "http.client": true, "ftplib": true, "paramiko": true, "boto3": true,
	"botocore": true, "openai": true, "anthropic": true, "wandb": true, "websocket": true,
	"websockets": true, "smtplib": true, "pycurl": true, "gdown": true, "kagglehub": true,
	"huggingface_hub": true, "google.cloud": true,
}

var (
	execCallRe   = gate(regexp.MustCompile(`\b(?:os\.system|os\.popen|subprocess\.(?:run|call|check_call|check_output|Popen|getoutput|getstatusoutput)|os\.exec\w*|os\.spawn\w*|create_subprocess_(?:shell|exec)|get_ipython\(\)\.system)\s*\(`), "os.", "subprocess.", "create_subprocess", "get_ipython")
	hubCallRe    = gate(regexp.MustCompile(`\.from_pretrained\s*\(|\bload_dataset\s*\(|\bhf_hub_download\s*\(|\bsnapshot_download\s*\(|torch\.hub\.load\s*\(|\btfds\.load\s*\(|nltk\.download\s*\(|\burlretrieve\s*\(|\burlopen\s*\(|\bdownload_url\s*\(|\bwget\.download\s*\(|\bSentenceTransformer\s*\(|\bdatasets\.\w+\.load_data\s*\(|\bwandb\.init\s*\(|\brequests\.(?:get|post|put|Session)\s*\(|\bhttpx\.(?:get|post|Client|AsyncClient)\s*\(|\bdownload\s*=\s*True|\bpretrained\s*=\s*True`), "from_pretrained", "load_dataset", "hf_hub_download", "snapshot_download", "hub.load", "tfds.load", "nltk.download", "urlretrieve", "urlopen", "download", "SentenceTransformer", "load_data", "wandb.init", "requests.", "httpx.", "pretrained")
	mlxLoadRe    = gate(regexp.MustCompile(`(?:^|[^.\w])load\s*\(|mlx_lm\.load\s*\(`), "load")
	rmtreeRe     = gate(regexp.MustCompile(`\b(?:shutil\.rmtree|os\.removedirs|os\.remove|os\.unlink)\s*\(`), "rmtree", "removedirs", "os.remove", "os.unlink")
	openWriteRe  = gate(regexp.MustCompile(`\bopen\s*\(`), "open")
	envReadRe    = gate(regexp.MustCompile(`\bos\.environ\s*\[|\bos\.environ\.get\s*\(|\bos\.getenv\s*\(`), "environ", "getenv")
	secretNameRe = regexp.MustCompile(`(?i)SECRET|TOKEN|PASSWORD|PASSWD|API_?KEY|ACCESS_?KEY|PRIVATE_?KEY|CREDENTIAL`)
	credFileRe   = gate(regexp.MustCompile(`\.ssh/id_|\.aws/credentials|\.netrc|\.docker/config\.json|\.kube/config|/etc/shadow|\.git-credentials|\.pypirc`), ".ssh", ".aws", ".netrc", ".docker", ".kube", "shadow", "credentials", ".pypirc")
	execEvalRe   = gate(regexp.MustCompile(`\b(?:exec|eval)\s*\(`), "exec", "eval")
	remoteRe     = gate(regexp.MustCompile(`requests\.|urlopen|urllib|httpx\.|aiohttp|\.get\(\s*["']https?:`), "requests.", "urlopen", "urllib", "httpx.", "aiohttp", ".get(")
	assignRemote = gate(regexp.MustCompile(`^(\w+)\s*=.*(?:requests\.|urlopen|urllib\.request|httpx\.)`), "requests.", "urlopen", "urllib.request", "httpx.")
	remoteCodeRe = gate(regexp.MustCompile(`\btrust_remote_code\s*=\s*True`), "trust_remote_code")
	shellTrueRe  = gate(regexp.MustCompile(`\bshell\s*=\s*True`), "shell")
)

// localDatasets are load_dataset builders that read local files.
var localDatasets = map[string]bool{"csv": true, "json": true, "parquet": true, "text": true,
	"imagefolder": true, "audiofolder": true, "arrow": true, "pandas": true, "webdataset": true}

// scanScript runs the per-language checks over the script statements.
func (a *analysis) scanScript() {
	switch a.lang {
	case langPython:
		a.scanPython(a.stmts, a.evidence)
	case langShell:
		for _, s := range a.stmts {
			a.shellLine(s.Code, a.evidence(s), 0)
		}
		a.shellOptions()
	}
}

// scanPython looks at every statement for imports, shell commands, hub
// downloads, deletions, system writes, secrets and remote code.
func (a *analysis) scanPython(stmts []stmt, evf func(stmt) string) {
	remoteVars := map[string]bool{}
	for _, s := range stmts {
		ev := evf(s)
		code := strings.TrimSpace(s.Code)
		switch {
		case strings.HasPrefix(code, "!"): // notebook shell escape
			a.shellLine(code[1:], ev, 1)
			continue
		case strings.HasPrefix(code, "%pip ") || strings.HasPrefix(code, "%conda "):
			a.shellLine(code[1:], ev, 1)
			continue
		case strings.HasPrefix(code, "import ") || strings.HasPrefix(code, "from "):
			a.importFrameworks(s, ev)
			continue
		}
		if loc := execCallRe.FindStringIndex(s.Bare); loc != nil {
			a.pyShellCall(s, loc, ev)
		}
		a.pyNetwork(s, ev)
		a.pyFiles(s, ev)
		a.pySecrets(s, ev)
		if m := assignRemote.FindStringSubmatch(s.Bare); m != nil {
			remoteVars[m[1]] = true
		}
		if loc := execEvalRe.FindStringIndex(s.Bare); loc != nil {
			args := callArgs(s, loc[1]-1)
			if remoteRe.MatchString(s.Bare) || len(args) > 0 && remoteVars[strings.TrimSpace(args[0])] {
				a.addRisk(sdk.SeverityCritical, riskExecRemote, "executes code fetched from the network", ev)
			}
		}
		if remoteCodeRe.MatchString(s.Bare) {
			a.addRisk(sdk.SeverityMedium, riskRemoteCode, "trust_remote_code=True runs Python code shipped with a Hub model", ev)
		}
		if cudaRe.MatchString(s.Code) && !strings.Contains(s.Bare, "is_available") {
			a.cuda = append(a.cuda, ev)
		}
		if metalRe.MatchString(s.Code) {
			a.metal = append(a.metal, ev)
		}
		if trainRe.MatchString(s.Bare) {
			a.training = append(a.training, ev)
		}
	}
	a.pyOptions(stmts)
}

// pyShellCall checks the command an os.system/subprocess call runs, built
// from the string literals of the call.
func (a *analysis) pyShellCall(s stmt, loc []int, ev string) {
	args := callArgs(s, loc[1]-1)
	if len(args) == 0 {
		return
	}
	first := args[0]
	lits := literals(stmt{Code: first, Bare: first})
	_, plain := pyLiteral(first)
	isList := strings.HasPrefix(first, "[")
	shell := strings.HasPrefix(s.Bare[loc[0]:], "os.") || strings.Contains(s.Bare[loc[0]:], "_shell") ||
		strings.Contains(s.Bare, "get_ipython") || shellTrueRe.MatchString(s.Bare)
	if shell && !plain && !isList {
		a.addRisk(sdk.SeverityLow, riskShellDynamic, "runs a shell command built at run time; check what feeds it", ev)
	}
	if len(lits) == 0 {
		return
	}
	if isList {
		a.shellWords(lits, ev, 1)
		return
	}
	a.shellLine(strings.Join(lits, " "), ev, 1)
}

// pyNetwork records downloads and API calls. Loads from local paths are not
// network use.
func (a *analysis) pyNetwork(s stmt, ev string) {
	loc := hubCallRe.FindStringIndex(s.Bare)
	mlxLoad := false
	if loc == nil && a.has("mlx-lm") {
		loc = mlxLoadRe.FindStringIndex(s.Bare)
		mlxLoad = true
	}
	if loc == nil {
		return
	}
	call := s.Bare[loc[0]:loc[1]]
	arg := ""
	if strings.HasSuffix(call, "(") {
		args := callArgs(s, loc[1]-1)
		if len(args) > 0 {
			arg, _ = pyLiteral(args[0])
		}
		if len(args) > 0 {
			if v, ok := pyLiteral(args[0]); ok {
				if strings.HasPrefix(v, "/") || strings.HasPrefix(v, ".") || strings.HasPrefix(v, "~") {
					return
				}
				if strings.Contains(call, "load_dataset") && localDatasets[v] {
					return
				}
				if mlxLoad && !hubRepoRe.MatchString(v) {
					return // a local model directory
				}
			}
		}
	}
	a.netPy(call, arg, ev) // allownet.go
	a.network = append(a.network, ev)
}

// pyFiles checks deletions and writes of paths outside the workspace.
func (a *analysis) pyFiles(s stmt, ev string) {
	if loc := rmtreeRe.FindStringIndex(s.Bare); loc != nil {
		if args := callArgs(s, loc[1]-1); len(args) > 0 {
			verb := strings.TrimSpace(strings.TrimSuffix(s.Bare[loc[0]:loc[1]], "("))
			recursive := strings.Contains(verb, "rmtree") || strings.Contains(verb, "removedirs")
			if t, ok := pyPathArg(args[0]); ok {
				a.rmTarget(t, recursive, verb, ev)
			}
		}
	}
	if loc := openWriteRe.FindStringIndex(s.Bare); loc != nil {
		args := callArgs(s, loc[1]-1)
		if len(args) >= 2 {
			t, ok1 := pyLiteral(args[0])
			mode, ok2 := pyLiteral(args[1])
			if ok1 && ok2 && strings.ContainsAny(mode, "wax+") {
				a.checkWrite(t, "opens for writing", ev)
			}
		}
	}
	for _, l := range literals(s) {
		if credFileRe.MatchString(l) {
			a.addRisk(sdk.SeverityHigh, riskCredentialFile, "touches a credentials file ("+clip(l, 60)+")", ev)
			break
		}
	}
}

// pyPathArg evaluates the few path expressions worth recognising.
func pyPathArg(raw string) (string, bool) {
	if v, ok := pyLiteral(raw); ok {
		return v, true
	}
	compact := strings.ReplaceAll(strings.ReplaceAll(raw, " ", ""), "'", `"`)
	switch compact {
	case `os.path.expanduser("~")`, `Path.home()`, `pathlib.Path.home()`, `os.environ["HOME"]`, `os.getenv("HOME")`:
		return "~", true
	}
	return "", false
}

// pySecrets reports reads of secret-looking environment variables. Reading
// them is normal; the user should know which ones the run needs.
func (a *analysis) pySecrets(s stmt, ev string) {
	for _, loc := range envReadRe.FindAllStringIndex(s.Bare, 4) {
		open := loc[1] - 1
		var arg string
		if s.Bare[open] == '[' {
			end := strings.IndexByte(s.Bare[open:], ']')
			if end < 0 {
				continue
			}
			arg = s.Code[open+1 : open+end]
		} else if args := callArgs(s, open); len(args) > 0 {
			arg = args[0]
		}
		if name, ok := pyLiteral(arg); ok && secretNameRe.MatchString(name) {
			a.addRisk(sdk.SeverityLow, riskSecretEnv, "reads the secret "+name+" from the environment; pass it explicitly (runbox keeps env secrets out of logs)", ev)
		}
	}
}
