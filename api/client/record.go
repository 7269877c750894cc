package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/runbox/runbox/api"
)

// Diff says what differs from run a to run b (any run names).
func (c *Client) Diff(ctx context.Context, a, b string) (*api.RunDiff, error) {
	var d api.RunDiff
	return &d, c.do(ctx, http.MethodGet, api.Prefix+"/diff", url.Values{"a": {a}, "b": {b}}, nil, &d)
}

// Compare puts runs side by side; q takes run, label, filter, goal,
// all_params, sort, offset and limit (see GET /v1/compare).
func (c *Client) Compare(ctx context.Context, q url.Values) (*api.Comparison, error) {
	var cmp api.Comparison
	return &cmp, c.do(ctx, http.MethodGet, api.Prefix+"/compare", q, nil, &cmp)
}

// MetricsWithSys returns all of a run's metric history, the machine's
// (sys/) series included.
func (c *Client) MetricsWithSys(ctx context.Context, id string) (*api.Metrics, error) {
	var m api.Metrics
	return &m, c.do(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id)+"/metrics", url.Values{"sys": {"1"}}, nil, &m)
}
