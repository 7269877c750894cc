package store

import "github.com/runbox/runbox/store/model"

// The record types live in store/model, so that clients can use them
// without linking Pebble; these aliases keep store.Run and friends.
type (
	// State is a run's lifecycle state (contract).
	State = model.State
	// Plan is a saved plan.
	Plan = model.Plan
	// Run is one run's record.
	Run = model.Run
	// Event is one lifecycle transition or notable happening of a run.
	Event = model.Event
	// Filter selects runs for List.
	Filter = model.Filter
)

// Run states (contract).
const (
	Queued    = model.Queued
	Preparing = model.Preparing
	Smoke     = model.Smoke
	Running   = model.Running
	Succeeded = model.Succeeded
	Failed    = model.Failed
	TimedOut  = model.TimedOut
	Cancelled = model.Cancelled
	Lost      = model.Lost
)

// States lists every state in lifecycle order.
var States = model.States
