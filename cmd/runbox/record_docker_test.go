package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// A container run's record names its image by id; its machine use comes
// from the stats API; a diff across sandboxes (a process run against a
// container run) works and names the sandbox and the image.
func TestDockerRecordAndDiffAcrossSandboxes(t *testing.T) {
	e, img := dockerEnv(t)
	e.gitWork(map[string]string{"job.sh": "sleep 2.5\n"})
	e.must("run", "--sandbox", "process", "--", "sh", "job.sh")
	e.must("run", "--sandbox", "docker", "--image", img, "--", "sh", "job.sh")
	r := e.completeRecord("2")
	if r.Record.Image == nil || r.Record.Image.Name != img || !strings.HasPrefix(r.Record.Image.ID, "sha256:") {
		t.Fatalf("image in the record: %+v", r.Record.Image)
	}
	if r.Machine == nil || r.Machine.Samples < 1 || r.Machine.PeakRSSBytes == 0 {
		t.Fatalf("a container run's machine use: %+v", r.Machine)
	}
	e.completeRecord("1")
	var d api.RunDiff
	if err := json.Unmarshal([]byte(e.must("diff", "--json", "1", "2")), &d); err != nil {
		t.Fatal(err)
	}
	got := kindsAndNames(d.Changes)
	for _, want := range []string{"sandbox backend", "image name"} {
		found := false
		for _, g := range got {
			found = found || g == want
		}
		if !found {
			t.Fatalf("diff across sandboxes %v lacks %q", got, want)
		}
	}
}
