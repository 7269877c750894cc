package daemon

import (
	"context"
	"testing"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/sandbox"
)

// A plan made to retry a run keeps it as parent_run_id; its runs are
// linked to it unless they name a parent of their own; an unknown parent
// is not_found.
func TestPlanKeepsTheRunItRetries(t *testing.T) {
	d := startDaemon(t)
	ctx := context.Background()
	first := d.run(t, "false")
	d.wait(t, first.ID)
	p, err := d.c.Plan(ctx, api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: sandbox.Process, ParentRunID: first.ID[:len(first.ID)-4]})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := d.c.GetPlan(ctx, p.ID); err != nil || p.ParentRunID != first.ID || got.ParentRunID != first.ID {
		t.Fatalf("plan parent %q, stored %+v %v; want %s", p.ParentRunID, got, err, first.ID)
	}
	r, err := d.c.Submit(ctx, api.RunRequest{PlanID: p.ID})
	if err != nil {
		t.Fatal(err)
	}
	if r.ParentRunID != first.ID || r.Attempt != 2 {
		t.Errorf("run of the plan: parent %q attempt %d", r.ParentRunID, r.Attempt)
	}
	d.wait(t, r.ID)
	own, err := d.c.Submit(ctx, api.RunRequest{PlanID: p.ID, ParentRunID: r.ID})
	if err != nil {
		t.Fatal(err)
	}
	if own.ParentRunID != r.ID || own.Attempt != 3 {
		t.Errorf("run naming its own parent: parent %q attempt %d", own.ParentRunID, own.Attempt)
	}
	d.wait(t, own.ID)
	_, err = d.c.Plan(ctx, api.RunRequest{Command: []string{"true"}, Workdir: t.TempDir(), Sandbox: sandbox.Process, ParentRunID: "01NOSUCHRUN"})
	if !client.IsNotFound(err) {
		t.Errorf("plan with an unknown parent: %v, want not_found", err)
	}
}
