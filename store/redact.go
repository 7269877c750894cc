package store

import (
	"regexp"
	"strings"
)

// Redacted replaces the value of a secret environment variable.
const Redacted = "<redacted>"

// secretWords make a variable secret wherever they appear in its name.
var secretWords = []string{
	"TOKEN", "SECRET", "PASSWORD", "PASSWD", "PASSPHRASE", "API_KEY", "APIKEY",
	"ACCESS_KEY", "CREDENTIAL", "PRIVATE", "COOKIE", "SESSION_KEY", "SIGNATURE",
}

// secretParts make a variable secret when they are a whole _-separated
// part of its name (DB_PASS, MYSQL_PWD, but not PWD or PASSENGER).
var secretParts = []string{"PASS", "PWD", "AUTH", "SALT", "DSN", "JWT", "BEARER", "OTP", "PIN"}

// secretValue catches secrets by their look whatever the name: URLs with a
// password, and well-known token formats.
var secretValue = regexp.MustCompile(`://[^/@\s:]+:[^/@\s]+@|^(gh[pousr]_|github_pat_|glpat-|sk-|xox[abprs]-|hf_|AKIA|ASIA|AIza)[A-Za-z0-9_\-]{12,}`)

// IsSecretKey reports whether an environment variable name looks like it
// holds a secret: it contains TOKEN, SECRET, PASSWORD, PASSWD, API_KEY,
// CREDENTIAL, PRIVATE, AUTH (not AUTHOR), ..., or it ends in KEY.
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
	// AUTHORIZATION is a secret, AUTHOR is not.
	k = strings.ReplaceAll(k, "AUTHORIZ", "AUTH")
	for _, p := range strings.FieldsFunc(k, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
		for _, w := range secretParts {
			if p == w || (w == "AUTH" && strings.HasPrefix(p, "AUTH") && !strings.HasPrefix(p, "AUTHOR")) {
				return true
			}
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
