package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

func matchNetwork(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	c := cand{code: sdk.CodeNetworkError, conf: 0.9, retry: true, details: map[string]string{}}

	hub := has(lc, "huggingface", "hf_hub", "hf.co", "repo", "hub")
	switch {
	case has(lc, "gatedrepoerror", "cannot access gated repo", "is restricted. you must", "is restricted and you are not in the authorized list", "gated repo"):
		c.details["kind"], c.retry = "gated", false
		repo := hubRepo(l.text, lc)
		c.details["repo"] = repo
		c.msg = "The Hugging Face model" + quoteIf(repo) + " is gated: your account has not been granted access, or no token was sent."
		c.sugg = []string{"Accept the model's license on its page on huggingface.co, then authenticate: `huggingface-cli login` or set HF_TOKEN in the run's environment."}
	case has(lc, "401 client error", "401 unauthorized", "http error 401", "invalid credentials", "invalid user token", "status code 401", "403 client error", "403 forbidden", "http error 403", "status code 403"):
		c.details["kind"], c.retry = "auth", false
		c.details["status"] = "401"
		if has(lc, "403") {
			c.details["status"] = "403"
		}
		c.details["repo"] = hubRepo(l.text, lc)
		c.msg = "The server refused the request (HTTP " + c.details["status"] + "): missing or insufficient credentials"
		c.sugg = []string{"Check the token: `huggingface-cli login` / HF_TOKEN for Hugging Face, or the API key for other services, and that it has access to this resource."}
	case has(lc, "repositorynotfounderror", "repository not found", "404 client error", "http error 404", "entrynotfounderror", "is not a valid model identifier", "revisionnotfounderror"):
		c.details["kind"], c.retry = "not_found", false
		c.details["status"] = "404"
		repo := hubRepo(l.text, lc)
		c.details["repo"] = repo
		c.msg = "The requested repository or file was not found on the server" + quoteIf(repo) + " (HTTP 404)"
		c.sugg = []string{"Check the model/dataset id and revision for typos (e.g. `org/name`), and that the file exists in that repo.", "For a private repo, log in (`huggingface-cli login` / HF_TOKEN): private repos answer 404 without a token."}
	case has(lc, "outgoing traffic has been disabled", "localentrynotfounderror", "hf_hub_offline"):
		c.details["kind"], c.retry = "offline_cache_miss", false
		c.msg = "Offline mode is on but the files are not in the local Hugging Face cache."
		c.sugg = []string{"Download the files once with network access (`huggingface-cli download REPO`), or unset HF_HUB_OFFLINE/TRANSFORMERS_OFFLINE."}
	case has(lc, "we couldn't connect to", "can't load tokenizer", "can't load config", "can't load the model", "can't load weights", "can't load the configuration", "can't load feature extractor", "can't load image processor", "can't load processor"):
		c.details["kind"] = "hub"
		repo := ""
		if k := strings.Index(lc, " for '"); k >= 0 {
			repo = firstQuoted(l.text[k:])
		} else if k := strings.Index(lc, "it looks like "); k >= 0 {
			repo = strings.Fields(l.text[k+14:] + " ")[0]
		}
		c.details["repo"] = repo
		if !strings.Contains(lc, "couldn't connect") && localPath(repo) {
			// "Can't load tokenizer for './out'": a local folder, not the Hub.
			sc.add(i, cand{code: sdk.CodeFileNotFound, conf: 0.8, details: map[string]string{"path": repo, "kind": "model_dir"},
				msg:  "The local model directory `" + repo + "` is missing or lacks the files to load it: " + clip(l.text, 200),
				sugg: []string{"Check the path (relative paths resolve from the working directory) and that the folder holds config.json, the tokenizer files and the weights (save_pretrained writes them)."}})
			return true
		}
		if !strings.Contains(lc, "couldn't connect") {
			// The library reports files it could not find, locally or
			// in the Hub's cache: FILE_NOT_FOUND, though for a Hub id
			// the cause behind it is often no network.
			sc.add(i, cand{code: sdk.CodeFileNotFound, conf: 0.6, details: map[string]string{"path": repo, "kind": "hub_or_local"},
				msg: "Could not find the files for" + quoteIf(repo) + " in a local directory or the Hugging Face cache: " + clip(l.text, 200),
				sugg: []string{
					"If `" + orDefault(repo, "the id") + "` is a local folder, check the path and that it holds config.json, the tokenizer files and the weights (save_pretrained writes them).",
					"If it is a Hub id, the run probably could not download it: check network access from the run (runbox's Docker sandbox has none unless enabled) or pre-download with `huggingface-cli download " + orDefault(repo, "REPO") + "`.",
					"A local folder with the same name as the repo id shadows the Hub.",
				}})
			return true
		}
		c.msg = "Could not reach huggingface.co to download" + quoteIf(repo) + " and it is not in the local cache."
		c.sugg = []string{
			"Check network access from the run (runbox's Docker sandbox has no network unless you enable it), or set HF_ENDPOINT for a mirror / proxy settings.",
			"Check the model id; a local folder with the same name as the repo id shadows the Hub.",
			"Pre-download with `huggingface-cli download REPO` and run with HF_HUB_OFFLINE=1.",
		}
	case has(lc, "certificate_verify_failed", "certificate verify failed", "sslerror", "ssl: ", "ssl_error", "sslcertverificationerror", "wrong_version_number"):
		c.details["kind"], c.retry = "ssl", false
		c.msg = "The TLS/SSL handshake failed"
		c.sugg = []string{"Update CA certificates (`pip install -U certifi`, `apt-get install ca-certificates`); behind a corporate proxy, point REQUESTS_CA_BUNDLE/SSL_CERT_FILE at its CA bundle."}
	case has(lc, "temporary failure in name resolution", "name or service not known", "nodename nor servname", "getaddrinfo failed", "could not resolve host", "failed to resolve", "unable to resolve host", "name resolution", "[errno -2]", "[errno -3]", "[errno 11001]", "no address associated with hostname"):
		c.details["kind"] = "dns"
		c.msg = "A host name could not be resolved (DNS)"
		if sc.in.Sandbox == "docker" {
			c.retry = false // a container without a network fails the same way every time
		}
	case has(lc, "connection refused", "connectionrefusederror", "[errno 111]", "econnrefused"):
		c.details["kind"] = "refused"
		c.msg = "The connection was refused: nothing is listening at the address, or a firewall rejects it"
	case has(lc, "connection reset", "connectionreseterror", "[errno 104]", "econnreset", "remotedisconnected", "remote end closed connection", "connection aborted", "connectionabortederror", "incompleteread", "chunkedencodingerror", "connection broken"):
		c.details["kind"] = "reset"
		c.msg = "The connection was dropped by the other side"
	case has(lc, "readtimeout", "read timed out", "connecttimeout", "connect timeout", "connection timed out", "[errno 110]", "timed out while", "etimedout", "sockettimeout", "socket.timeout"):
		c.details["kind"] = "timeout"
		c.msg = "A network request timed out"
	case has(lc, "network is unreachable", "[errno 101]", "no route to host", "[errno 113]", "max retries exceeded", "failed to establish a new connection", "newconnectionerror", "urlopen error", "proxyerror", "unable to access 'http", "clientconnectorerror", "cannot connect to host", "failed to connect to all addresses", "connecterror", "connectionerror"):
		c.details["kind"] = "unreachable"
		c.msg = "The network request could not be completed"
	case has(lc, "429 client error", "too many requests", "http error 429"):
		c.details["kind"], c.details["status"] = "rate_limited", "429"
		c.msg = "The server rate-limited the requests (HTTP 429)"
		c.sugg = []string{"Wait and retry; authenticate (HF_TOKEN) for higher limits; cache downloads instead of fetching on every run."}
	case has(lc, "server error", "http error 50", "502 bad gateway", "503 service unavailable", "504 gateway"):
		c.details["kind"] = "server_error"
		c.msg = "The server answered with an error (HTTP 5xx)"
	case has(lc, "address already in use"):
		c.details["kind"], c.retry = "port_in_use", false
		c.msg = "The port is already in use by another process"
		c.sugg = []string{"Stop the process holding the port (`lsof -i :PORT`) or pick another port."}
	default:
		return false
	}
	if host := hostOf(l.text, lc); host != "" {
		c.details["host"] = host
		if c.details["kind"] != "hub" && !strings.Contains(c.msg, host) && !strings.Contains(c.msg, "Hugging Face") {
			c.msg += " (host " + host + ")"
		}
	}
	if !strings.HasSuffix(c.msg, ".") {
		c.msg += "."
	}
	if c.sugg == nil {
		c.sugg = networkSuggestions(sc, hub || c.details["host"] == "huggingface.co")
	}
	for k, v := range c.details {
		if v == "" {
			delete(c.details, k)
		}
	}
	if k := c.details["kind"]; k == "gated" || k == "not_found" || k == "offline_cache_miss" {
		c.conf = 0.95 // more telling than the transport error under it
	}
	sc.add(i, c)
	return true
}

func networkSuggestions(sc *scanner, hub bool) []string {
	var s []string
	if sc.in.Sandbox == "docker" {
		s = append(s, "runbox's Docker sandbox has no network unless you ask for it: enable network access for this run.")
	}
	s = append(s, "Check the machine's connection, DNS and proxy settings (HTTP(S)_PROXY), and that the host and port are right.")
	if hub {
		s = append(s, "For Hugging Face, pre-download the model (`huggingface-cli download REPO`) and run with HF_HUB_OFFLINE=1, or set HF_ENDPOINT to a mirror.")
	}
	return append(s, "If the failure was transient, retry; add retries with backoff around downloads.")
}

// hostOf finds host='x', "to host x", or the host of the first URL.
func hostOf(text, lc string) string {
	if h := quotedAfter(text, lc, "host="); h != "" {
		return h
	}
	for _, m := range []string{"resolve host: ", "resolve host ", "connect to host "} {
		if k := strings.Index(lc, m); k >= 0 {
			return strings.Trim(strings.Fields(text[k+len(m):] + " ")[0], "'\":,")
		}
	}
	if k := strings.Index(lc, "://"); k >= 0 {
		h := text[k+3:]
		if e := strings.IndexAny(h, "/:'\" )"); e >= 0 {
			h = h[:e]
		}
		return h
	}
	return ""
}

// hubRepo finds the repo id in Hugging Face messages: "/api/models/org/name",
// "huggingface.co/org/name/resolve", "for url: ..." or "model org/name".
func hubRepo(text, lc string) string {
	for _, m := range []string{"/api/models/", "/api/datasets/", "huggingface.co/datasets/", "huggingface.co/"} {
		k := strings.Index(lc, m)
		if k < 0 {
			continue
		}
		p := strings.Split(text[k+len(m):], "/")
		if len(p) >= 2 && p[0] != "api" && p[0] != "models" {
			return strings.Trim(p[0]+"/"+strings.Fields(p[1] + " ")[0], "'\".,:)")
		}
	}
	for _, m := range []string{"access to model ", "repo id: ", "repository for "} {
		if k := strings.Index(lc, m); k >= 0 {
			return strings.Trim(strings.Fields(text[k+len(m):] + " ")[0], "'\".,:)")
		}
	}
	return ""
}

var gateNetwork = []string{"connect", "connection", "refused", "reset by peer", "resolution", "resolve", "servname", "service not known", "getaddrinfo",
	"ssl", "certificate", "timeout", "timed out", "max retries", "unreachable", "remotedisconnected", "incompleteread", "chunkedencoding",
	"proxy", "urlopen", "huggingface", "hub", "client error", "server error", "gated", "repositorynotfound", "repository not found",
	"can't load", "valid model identifier", "outgoing traffic", "localentrynotfound", "unable to access 'http", "too many requests", "address already in use"}

// localPath reports whether a model id is written as a filesystem path
// ("./out", "/models/x", "~/ckpt", "C:\\models") rather than a Hub repo id.
func localPath(p string) bool {
	return strings.HasPrefix(p, "./") || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") ||
		strings.Contains(p, "\\") || len(p) > 2 && isLetter(p[0]) && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}
