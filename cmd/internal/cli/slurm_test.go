package cli

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api"
)

// TestSlurmFlags: the Slurm flags parse onto the request, and only with
// --sandbox slurm.
func TestSlurmFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    *api.SlurmRequest
		wantErr string
	}{
		{[]string{"run", "--sandbox", "slurm", "--", "true"}, nil, ""},
		{[]string{"run", "--sandbox", "slurm", "--partition", "gpu", "--account", "lab", "--qos", "high",
			"--slurm-opt", "constraint=a100", "--slurm-opt", "exclusive=", "--queue-timeout", "10m", "--", "true"},
			&api.SlurmRequest{Partition: "gpu", Account: "lab", QOS: "high",
				Options: map[string]string{"constraint": "a100", "exclusive": ""}, QueueTimeout: api.Duration(10 * time.Minute)}, ""},
		{[]string{"run", "--partition", "gpu", "--", "true"}, nil, "need --sandbox slurm"},
		{[]string{"run", "--sandbox", "slurm", "--slurm-opt=-time=5", "--", "true"}, nil, "no dashes"},
	}
	for _, tt := range tests {
		c, _, err := parseFull(t, tt.args)
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		req, err := c.Run.request([]string{"true"})
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("%q: err %v, want %q", tt.args, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tt.args, err)
		}
		if !reflect.DeepEqual(req.Slurm, tt.want) || req.Sandbox != "slurm" {
			t.Errorf("%q: slurm %+v, want %+v", tt.args, req.Slurm, tt.want)
		}
	}
}
