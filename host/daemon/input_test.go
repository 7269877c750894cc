package daemon

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
)

// A request no process can run as given is refused at submission (400,
// naming the argument), for every client: a NUL byte in argv or env was
// accepted (201) and then failed as COMMAND_NOT_FOUND, and a pids limit
// past the kernel's was blamed on a missing pids controller.
func TestSubmitRefusesWhatNoProcessCanTake(t *testing.T) {
	d := startDaemon(t)
	for _, tt := range []struct {
		path, body, want string
	}{
		{"/v1/runs", `{"command": ["echo", "a\u0000b"], "sandbox": "process"}`, `command argument 1 ("a\x00b") holds a NUL byte`},
		{"/v1/runs", `{"command": ["ec\u0000ho"], "sandbox": "process"}`, `command argument 0`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "env": ["FOO=a\u0000b"]}`, `env "FOO" holds a NUL byte`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "client_env": ["BAR=\u0000"]}`, `client_env "BAR" holds a NUL byte`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "setup": ["echo \u0000"]}`, `setup command 0`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "workdir": "/tmp/\u0000x"}`, `workdir`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "limits": {"pids": 99999999999}}`, `pids 99999999999 is more than the kernel allows (4194304)`},
		{"/v1/plans", `{"command": ["echo", "\u0000"]}`, `command argument 1`},
		// An asset that can never be placed: refused here, not at the
		// run's start (process) or taken and ignored (Slurm, before).
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "workdir": "/tmp", "assets": [{"src": "/nonexistent/runbox-asset", "dst": "a"}]}`, `asset /nonexistent/runbox-asset: no such file or directory`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "workdir": "/tmp", "assets": [{"src": "data.csv", "dst": "a"}]}`, `asset "data.csv": the source must be an absolute path`},
		{"/v1/runs", `{"command": ["true"], "sandbox": "process", "workdir": "/tmp", "assets": [{"src": "/etc/hostname", "dst": "../../etc/passwd"}]}`, `asset "../../etc/passwd": destination must be a relative path inside the workspace`},
		{"/v1/plans", `{"command": ["true"], "workdir": "/tmp", "assets": [{"src": "/nonexistent/runbox-asset", "dst": "a"}]}`, `asset /nonexistent/runbox-asset`},
	} {
		t.Run(tt.want, func(t *testing.T) {
			code, e := d.raw(t, "POST", tt.path, tt.body)
			if code != http.StatusBadRequest || e.Code != api.CodeBadRequest || !strings.Contains(e.Error, tt.want) {
				t.Fatalf("answer %d %q %q, want 400 with %q", code, e.Code, e.Error, tt.want)
			}
		})
	}
	if runs, err := d.c.List(context.Background(), nil); err != nil || len(runs) != 0 {
		t.Fatalf("after refusals: %d runs, %v", len(runs), err)
	}
	// The same requests without the NUL run.
	r := d.run(t, "echo", "ab")
	if got := d.wait(t, r.ID); got.State != "succeeded" {
		t.Fatalf("echo ab: %s", got.State)
	}
}

// An empty run id is the caller's mistake, said as such, not "run logs
// not found" (the path /v1/runs//logs is cleaned to /v1/runs/logs).
func TestEmptyRunID(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	if _, err := d.c.Get(ctx, ""); !errors.Is(err, client.ErrNoID) {
		t.Errorf("Get(\"\"): %v", err)
	}
	if err := d.c.Logs(ctx, "", nil, func(client.Frame) error { return nil }); !errors.Is(err, client.ErrNoID) {
		t.Errorf("Logs(\"\"): %v", err)
	}
	if _, err := d.c.Stop(ctx, "", 0); !errors.Is(err, client.ErrNoID) {
		t.Errorf("Stop(\"\"): %v", err)
	}
}
