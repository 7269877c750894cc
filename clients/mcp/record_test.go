package mcp

import (
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/internal/testwait"
)

// local_status of a run that fails after the same command succeeded says
// what changed since: here, the edit of the script in a git workspace.
func TestStatusSaysWhatChangedSinceItWorked(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	d := startDaemon(t)
	work := t.TempDir()
	writeFile(t, work, "job.sh", "exit 0\n")
	for _, args := range [][]string{{"init", "-q"}, {"add", "."}, {"-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "init"}} {
		if out, err := exec.Command("git", append([]string{"-C", work}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	a := newAgent(t, d, work)
	ok := a.start([]string{"sh", "job.sh"}, nil)
	a.waitDone(ok)
	complete := func(id string) runOut {
		var r runOut
		err := testwait.For("the record of "+id, 30*time.Second, func() error {
			a.ok("local_status", map[string]any{"run_id": id}, &r)
			if r.WhatRan == nil || r.WhatRan.Host == "" {
				return os.ErrNotExist
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	complete(ok)
	writeFile(t, work, "job.sh", "echo broken >&2\nexit 4\n")
	bad := a.start([]string{"sh", "job.sh"}, nil)
	if w := a.waitDone(bad); w.WhatRan == nil {
		t.Fatalf("local_wait's last answer has no record of what ran: %+v", w)
	}
	r := complete(bad)
	if r.SinceWorked == nil || r.SinceWorked.RunID != ok || len(r.SinceWorked.Changes) == 0 ||
		!strings.Contains(strings.Join(r.SinceWorked.Changes, "\n"), "job.sh") {
		t.Fatalf("since it worked: %+v", r.SinceWorked)
	}
	if !r.WhatRan.Dirty || len(r.WhatRan.ChangedFile) != 1 || r.WhatRan.ChangedFile[0] != "job.sh" {
		t.Fatalf("what ran: %+v", r.WhatRan)
	}
	var again runOut
	text := a.ok("local_status", map[string]any{"run_id": bad}, &again)
	if !strings.Contains(text, "since it last worked") {
		t.Fatalf("the summary does not say what changed:\n%s", text)
	}
}
