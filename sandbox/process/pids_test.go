package process_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/runbox/runbox/sandbox/process"
)

func TestDefaultPids(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opt     int64
		env     string // "-" leaves it unset
		want    int64
		wantErr string
	}{
		{name: "built-in", env: "-", want: process.DefaultPidsLimit},
		{name: "empty env", env: "", want: process.DefaultPidsLimit},
		{name: "env", env: "300", want: 300},
		{name: "env off", env: "0", want: 0},
		{name: "option wins", opt: 50, env: "300", want: 50},
		{name: "option off", opt: -1, env: "300", want: 0},
		{name: "env negative", env: "-3", wantErr: "RUNBOX_DEFAULT_PIDS"},
		{name: "env junk", env: "lots", wantErr: "want a number"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(process.PidsEnv, tc.env) // restored after the test
			if tc.env == "-" {
				os.Unsetenv(process.PidsEnv)
			}
			got, err := newSandbox(process.Options{DefaultPids: tc.opt}).DefaultPids()
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err %v, want one mentioning %q", err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %d, %v; want %d", got, err, tc.want)
			}
		})
	}
}

// A bad RUNBOX_DEFAULT_PIDS is the daemon's misconfiguration: Start says
// so instead of running without the limit the operator meant.
func TestStartRejectsBadDefaultPids(t *testing.T) {
	t.Setenv(process.PidsEnv, "many")
	_, err := newSandbox(process.Options{}).Start(context.Background(), newSpec(t, "true"))
	if err == nil || !strings.Contains(err.Error(), process.PidsEnv) {
		t.Fatalf("start: %v, want an error naming %s", err, process.PidsEnv)
	}
}
