package cli

import "testing"

// `runbox mcp` goes to runboxd (the MCP SDK is not in runbox), with its
// flags checked first.
func TestMcpGoesToTheEngine(t *testing.T) {
	t.Setenv("RUNBOX_HOME", t.TempDir())
	if !IsEngineCommand("mcp") {
		t.Error("mcp is not in EngineCommands: runbox would not hand it over before parsing")
	}
	for _, tc := range []struct {
		args []string
		code int
	}{
		{[]string{"mcp"}, 0},
		{[]string{"mcp", "--http", "127.0.0.1:8765", "--token-file", "tok"}, 0},
		{[]string{"mcp", "--token-file", "tok"}, 2},
		{[]string{"mcp", "--allow-remote"}, 2},
	} {
		var e recordingEngine
		code := Main(tc.args, &e)
		want := 0
		if tc.code == 0 {
			want = 1
		}
		if code != tc.code || len(e.got) != want {
			t.Errorf("%q: exit %d, engine got %v; want exit %d", tc.args, code, e.got, tc.code)
		}
	}
}
