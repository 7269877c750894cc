package client

import (
	"context"
	"net/http"
	"net/url"

	"github.com/runbox/runbox/api"
)

// Metrics returns a run's metric history; names selects series (none: all).
func (c *Client) Metrics(ctx context.Context, id string, names ...string) (*api.Metrics, error) {
	var m api.Metrics
	var q url.Values
	if len(names) > 0 {
		q = url.Values{"name": names}
	}
	return &m, c.do(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id)+"/metrics", q, nil, &m)
}
