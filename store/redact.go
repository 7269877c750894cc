package store

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
)

// Redacted replaces the value of a secret environment variable.
const Redacted = "<redacted>"

// secretWords make a variable secret wherever they appear in its name.
var secretWords = []string{
	"SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
	"ACCESS_KEY", "CREDENTIAL", "PRIVATE", "COOKIE", "SESSION_KEY", "SIGNATURE",
}

// secretParts make a variable secret when they are a whole part of its
// name, parts being split at _ - . and camelCase (DB_PASS, MYSQL_PWD,
// GITHUB_PAT, githubPat, SSH_KEY, but not PWD, PASSENGER, PATH or
// KEYBOARD_LAYOUT).
var secretParts = []string{
	"PASS", "PWD", "AUTH", "SALT", "DSN", "JWT", "BEARER", "OTP", "PIN",
	"PAT", "KEY", "KEYS", "CRED", "CREDS",
}

// secretValue catches secrets by their look whatever the name: URLs with a
// password, well-known token formats, private keys and JWTs.
var secretValue = regexp.MustCompile(`://[^/@\s:]+:[^/@\s]+@|^(gh[pousr]_|github_pat_|glpat-|sk-|xox[abprs]-|hf_|AKIA|ASIA|AIza)[A-Za-z0-9_\-]{12,}|-----BEGIN [A-Z ]*PRIVATE KEY-----|^eyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.`)

// nameParts splits a variable name at _ - . and lower-to-upper case
// changes, upper-cased: "githubPat" and "GITHUB_PAT" are both GITHUB PAT.
func nameParts(key string) []string {
	var parts []string
	var cur []rune
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			parts = append(parts, strings.ToUpper(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range key {
		switch {
		case r == '_' || r == '-' || r == '.':
			flush()
		case unicode.IsUpper(r) && (unicode.IsLower(prev) || unicode.IsDigit(prev)):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return parts
}

// IsSecretKey reports whether an environment variable name looks like it
// holds a secret: it names a token (HF_TOKEN, not TOKENIZERS_PARALLELISM or
// MAX_TOKENS), a secret, password, credential, private or API key, or has
// PAT, KEY, PASS, AUTH (not AUTHOR), ... as a whole part, or ends in KEY.
func IsSecretKey(key string) bool {
	k := strings.ToUpper(key)
	if k == "PWD" || k == "OLDPWD" { // the shell's working directory
		return false
	}
	if strings.HasSuffix(k, "KEY") {
		return true
	}
	for _, w := range secretWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	for _, p := range nameParts(key) {
		// A token is a secret; tokens (a count) and a tokenizer are not.
		if strings.Contains(p, "TOKEN") && p != "TOKENS" && !strings.HasPrefix(p, "TOKENIZ") {
			return true
		}
		// AUTHORIZATION is a secret, AUTHOR is not.
		if strings.HasPrefix(p, "AUTH") && !strings.HasPrefix(p, "AUTHOR") || strings.HasPrefix(p, "AUTHORIZ") {
			return true
		}
		if slices.Contains(secretParts, p) {
			return true
		}
	}
	return false
}

// RedactEnv returns a copy of env (KEY=VALUE entries) in which the value of
// every variable that looks secret, by name or by value, is replaced by
// <redacted>. Entries without "=" are kept as they are.
func RedactEnv(env []string) []string {
	if env == nil {
		return nil
	}
	out := make([]string, len(env))
	for i, kv := range env {
		k, v, ok := strings.Cut(kv, "=")
		if ok && v != "" && v != Redacted && (IsSecretKey(k) || secretValue.MatchString(v)) {
			kv = k + "=" + Redacted
		}
		out[i] = kv
	}
	return out
}
