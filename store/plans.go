package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"
)

// PutPlan stores p, creating or replacing it. An empty ID or CreatedAt is
// filled in on p. The stored copy has secret env values redacted; p itself
// is left as it is.
func (s *Store) PutPlan(ctx context.Context, p *Plan) error {
	if p.ID == "" {
		p.ID = NewID()
	}
	if err := validID("plan", p.ID); err != nil {
		return err
	}
	if p.CreatedAt.IsZero() {
		p.CreatedAt = time.Now().UTC()
	}
	stored := *p
	stored.Spec.Env = RedactEnv(p.Spec.Env)
	v, err := json.Marshal(&stored)
	if err != nil {
		return fmt.Errorf("store: encode plan %s: %w", p.ID, err)
	}
	return s.writer(ctx, true, func(_ *pebble.DB, b *pebble.Batch) error {
		return b.Set(planKey(p.ID), v, nil)
	})
}

// GetPlan returns the plan with that id or unique id prefix.
func (s *Store) GetPlan(ctx context.Context, idOrPrefix string) (*Plan, error) {
	var p *Plan
	err := s.reader(ctx, func(db *pebble.DB) error {
		id, v, err := resolve(db, planPfx, "plan", idOrPrefix)
		if err != nil {
			return err
		}
		p, err = decode[Plan]("plan", id, v)
		return err
	})
	return p, err
}
