package egress

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
)

// Report files a backend leaves in a run's state dir: one per phase, so
// the setup's refusals and the command's are told apart.
const (
	ReportFile      = "egress.json"
	SetupReportFile = "egress-setup.json"
)

// ResolveEnv names host-to-address overrides the proxy uses ahead of the
// host's resolver, "NAME=ADDR,NAME=ADDR" (curl --resolve for a whole
// daemon): a mirror on this machine, or loopback test servers. It is read
// from the environment of whatever runs the proxy (the daemon's, passed
// to its supervisors); a run cannot set it.
const ResolveEnv = "RUNBOX_EGRESS_RESOLVE"

// ResolveFromEnv reads ResolveEnv.
func ResolveFromEnv() map[string]string {
	v := os.Getenv(ResolveEnv)
	if v == "" {
		return nil
	}
	m := map[string]string{}
	for _, kv := range strings.Split(v, ",") {
		if k, a, ok := strings.Cut(strings.TrimSpace(kv), "="); ok && k != "" && a != "" {
			m[strings.ToLower(k)] = a
		}
	}
	return m
}

// WriteReport saves r as dir/name, atomically.
func WriteReport(dir, name string, r Report) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, name+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}

// ReadReports merges the reports left in dir (setup's and the command's);
// ok is false when there are none.
func ReadReports(dir string) (r Report, ok bool) {
	for _, name := range []string{SetupReportFile, ReportFile} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			continue
		}
		var one Report
		if json.Unmarshal(b, &one) != nil {
			continue
		}
		ok = true
		r.Allowed = append(r.Allowed, one.Allowed...)
		r.Proxied += one.Proxied
		r.Refused += one.Refused
		r.Overflow += one.Overflow
		r.Blocked = append(r.Blocked, one.Blocked...)
	}
	return r, ok
}

// RefusedNote starts the log note a backend writes for the first refusal
// of each host:port: "egress refused HOST:PORT (REASON)". The daemon
// turns each into an event.
const RefusedNote = "egress refused"
