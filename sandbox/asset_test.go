package sandbox

import "testing"

// An asset lands inside the workspace or nowhere: a destination that is
// empty, absolute or climbs out (however it is spelled) is refused.
func TestAssetTarget(t *testing.T) {
	for _, tt := range []struct {
		dst  string
		want string // "" for refused
	}{
		{"a/b", "/w/a/b"},
		{"./a/../b", "/w/b"},
		{".", "/w"},
		{"", ""},
		{"/etc/passwd", ""},
		{"..", ""},
		{"../x", ""},
		{"a/../../x", ""},
	} {
		got, err := Asset{Src: "/s", Dst: tt.dst}.Target("/w")
		if (err != nil) != (tt.want == "") || got != tt.want {
			t.Errorf("Target(%q) = %q, %v; want %q", tt.dst, got, err, tt.want)
		}
	}
}
