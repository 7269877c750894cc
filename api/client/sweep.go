package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/runbox/runbox/api"
)

// SubmitSweep creates a sweep; it answers once every member is queued.
func (c *Client) SubmitSweep(ctx context.Context, req api.SweepRequest) (*api.Sweep, error) {
	if req.IdempotencyKey == "" {
		// The client sends a request again when its daemon died before
		// answering: the key makes that the same sweep, not a second one.
		k := api.RunRequest{}
		withKey(&k)
		req.IdempotencyKey = k.IdempotencyKey
	}
	var s api.Sweep
	return &s, c.do(ctx, http.MethodPost, api.Prefix+"/sweeps", nil, req, &s)
}

// Sweep returns a sweep and its members, sorted by metric sortBy (best
// first) when given.
func (c *Client) Sweep(ctx context.Context, id, sortBy string) (*api.Sweep, error) {
	q := url.Values{}
	if sortBy != "" {
		q.Set("sort", sortBy)
	}
	var s api.Sweep
	return &s, c.do(ctx, http.MethodGet, api.Prefix+"/sweeps/"+url.PathEscape(id), q, nil, &s)
}

// Sweeps lists sweeps, newest first.
func (c *Client) Sweeps(ctx context.Context) ([]api.Sweep, error) {
	var l api.SweepList
	return l.Sweeps, c.do(ctx, http.MethodGet, api.Prefix+"/sweeps", nil, nil, &l)
}

// WaitSweep waits until every member of a sweep has ended.
func (c *Client) WaitSweep(ctx context.Context, id string) (*api.Sweep, error) {
	var s api.Sweep
	return &s, c.do(ctx, http.MethodGet, api.Prefix+"/sweeps/"+url.PathEscape(id)+"/wait", nil, nil, &s)
}

// StopSweep cancels a sweep's queued members and stops its running ones.
func (c *Client) StopSweep(ctx context.Context, id string) (*api.Sweep, error) {
	var s api.Sweep
	return &s, c.do(ctx, http.MethodPost, api.Prefix+"/sweeps/"+url.PathEscape(id)+"/stop", nil, nil, &s)
}
