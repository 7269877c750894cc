package cli

import "context"

// DoctorCmd is `runbox doctor`: it checks a home's store while no daemon
// holds it, and with --repair rebuilds what it can.
type DoctorCmd struct {
	Repair bool `help:"Repair what the check finds: salvage a damaged store, rebuild its indexes, correct runs from their run directories. A copy of the store is kept first."`
}

// Run checks (and repairs) the store (in runboxd).
func (c *DoctorCmd) Run(ctx context.Context, a *App) error { return a.Engine.Run(ctx, a, c) }
