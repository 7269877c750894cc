package egress

import (
	"strings"
	"testing"
)

func TestParseRefusesWhatIsNotAHostName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"*", "use --network"},
		{"*.", "use --network"},
		{"https://pypi.org/simple", "not a URL"},
		{"10.0.0.1", "an address"},
		{"[::1]:443", "IPv6"},
		{"::1", "IPv6"},
		{"pypi.org:0", "port must be"},
		{"pypi.org:99999", "port must be"},
		{"pypi.org:http", "port must be"},
		{"a.*.org", "not a host name"},
		{"bad host", "not a host name"},
		{"-lead.org", "not a host name"},
		{"*.org", "too wide"},
		{"1.2.3", "not a host name"},
	} {
		_, err := Parse([]string{"ok.org," + tc.in})
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.in) {
			t.Errorf("Parse(%q) = %v, want an error naming it and saying %q", tc.in, err, tc.want)
		}
	}
}

func TestAllows(t *testing.T) {
	l, err := Parse([]string{"pypi.org, *.pythonhosted.org", "git.example.com:8443", "Upper.Test."})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		host string
		port int
		want bool
	}{
		{"pypi.org", 443, true},
		{"pypi.org", 80, true},
		{"PYPI.ORG.", 443, true},
		{"pypi.org", 22, false},
		{"evil-pypi.org", 443, false},
		{"pypi.org.evil.com", 443, false},
		{"files.pythonhosted.org", 443, true},
		{"a.b.pythonhosted.org", 443, true},
		{"pythonhosted.org", 443, false}, // *.x is below x, not x
		{"git.example.com", 8443, true},
		{"git.example.com", 443, false},
		{"upper.test", 443, true},
		{"151.101.0.223", 443, false},
		{"[::1]", 443, false},
	} {
		if got := l.Allows(tc.host, tc.port); got != tc.want {
			t.Errorf("Allows(%s, %d) = %v, want %v", tc.host, tc.port, got, tc.want)
		}
	}
	if got := strings.Join(l.Strings(), ","); got != "pypi.org,*.pythonhosted.org,git.example.com:8443,upper.test" {
		t.Errorf("Strings = %s", got)
	}
	if !(List{}).Empty() || (List{}).Allows("pypi.org", 443) {
		t.Error("the zero list must allow nothing")
	}
}
