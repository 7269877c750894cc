// Package egress is the network a run gets under --allow-net: none of its
// own, only an HTTP proxy that forwards to the hosts on an allow-list
// (CONNECT for TLS, plain forwarding for HTTP) and refuses everything
// else, recording each refusal. The run reaches the proxy on its own
// loopback (a listener made inside its network namespace); the proxy
// resolves and dials from the host's namespace, so the run itself has no
// route and no DNS: a raw socket, a literal address or a DNS query goes
// nowhere.
package egress

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"
)

// DefaultPorts are the ports an entry without :PORT allows.
var DefaultPorts = []int{80, 443}

// Rule is one allow-list entry: an exact host name, or every name below a
// suffix (*.example.org allows a.example.org and a.b.example.org, not
// example.org itself), on some ports.
type Rule struct {
	Host   string // lower case, no trailing dot; for a suffix rule the part after "*."
	Suffix bool
	Ports  []int
}

func (r Rule) String() string {
	h := r.Host
	if r.Suffix {
		h = "*." + h
	}
	if slices.Equal(r.Ports, DefaultPorts) {
		return h
	}
	return h + ":" + strconv.Itoa(r.Ports[0])
}

// List is a parsed allow-list. The zero List allows nothing.
type List struct{ Rules []Rule }

// Parse reads --allow-net values: each a comma list of HOST, *.SUFFIX,
// HOST:PORT or *.SUFFIX:PORT. It refuses, naming it, an entry that is not a
// host name: "*" alone (that is --network), an address (a literal IP
// would bypass name checks), a URL, a wildcard anywhere but the front, a
// port out of range.
func Parse(values []string) (List, error) {
	var l List
	for _, v := range values {
		for _, e := range strings.Split(v, ",") {
			e = strings.TrimSpace(e)
			if e == "" {
				continue
			}
			r, err := parseEntry(e)
			if err != nil {
				return List{}, err
			}
			l.Rules = append(l.Rules, r)
		}
	}
	return l, nil
}

func parseEntry(e string) (Rule, error) {
	bad := func(why string) (Rule, error) {
		return Rule{}, fmt.Errorf("--allow-net %q: %s", e, why)
	}
	if strings.Contains(e, "://") || strings.Contains(e, "/") {
		return bad("not a host name (give the host alone: pypi.org, not a URL)")
	}
	host, ports := e, DefaultPorts
	if h, p, ok := strings.Cut(e, ":"); ok {
		if strings.Contains(p, ":") {
			return bad("not a host name (an IPv6 address? only host names are allowed)")
		}
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return bad("port must be a number from 1 to 65535")
		}
		host, ports = h, []int{n}
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	r := Rule{Ports: ports}
	switch {
	case host == "*" || host == "*.":
		return bad("\"*\" would allow every host: use --network to give the run the network")
	case strings.HasPrefix(host, "*."):
		r.Suffix, host = true, host[2:]
	}
	if net.ParseIP(host) != nil {
		return bad("an address, not a host name (the proxy allows names; a literal address is always refused)")
	}
	if !validName(host) {
		return bad("not a host name (letters, digits, '-' and '.'; a '*.' only at the front)")
	}
	if r.Suffix && !strings.Contains(host, ".") {
		return bad("a wildcard over a whole top-level domain is too wide (give *.example.org, not *.org)")
	}
	r.Host = host
	return r, nil
}

// validName reports whether s is a DNS host name (RFC 1123 labels).
func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	// All digits (and dots) would be an address in disguise.
	return strings.Trim(s, "0123456789.") != ""
}

// Allows reports whether host:port may be reached. host is compared in
// lower case without a trailing dot; a literal address never matches.
func (l List) Allows(host string, port int) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if net.ParseIP(strings.Trim(host, "[]")) != nil {
		return false
	}
	for _, r := range l.Rules {
		if !slices.Contains(r.Ports, port) {
			continue
		}
		if r.Suffix && strings.HasSuffix(host, "."+r.Host) || !r.Suffix && host == r.Host {
			return true
		}
	}
	return false
}

// Empty reports whether the list allows nothing.
func (l List) Empty() bool { return len(l.Rules) == 0 }

// Strings is the list as it would be given on the command line.
func (l List) Strings() []string {
	out := make([]string, len(l.Rules))
	for i, r := range l.Rules {
		out[i] = r.String()
	}
	return out
}
