package ui

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Every API call needs the token; a wrong Host (DNS rebinding) or a
// foreign Origin is refused; a POST needs the header, not just the cookie;
// and a refusal leaks nothing.
func TestAPIRefusesWithoutToken(t *testing.T) {
	e := startEnv(t)
	r := e.train(t, "secret-name", 1, "0")
	if _, err := e.c.Wait(context.Background(), r.ID, 0); err != nil {
		t.Fatal(err)
	}
	tok := e.srv.token
	cookie := &http.Cookie{Name: cookieName, Value: tok}
	tests := []struct {
		name, method, path, host, origin, header string
		cookie                                   *http.Cookie
		want                                     int
	}{
		{"list without token", "GET", "/api/runs", "", "", "", nil, 401},
		{"list with a wrong token", "GET", "/api/runs", "", "", "nope", nil, 401},
		{"list with a wrong cookie", "GET", "/api/runs", "", "", "", &http.Cookie{Name: cookieName, Value: "nope"}, 401},
		{"run without token", "GET", "/api/runs/" + r.ID, "", "", "", nil, 401},
		{"metrics without token", "GET", "/api/runs/" + r.ID + "/metrics", "", "", "", nil, 401},
		{"stream without token", "GET", "/api/stream", "", "", "", nil, 401},
		{"page without token", "GET", "/", "", "", "", nil, 401},
		{"page with a wrong token", "GET", "/?token=nope", "", "", "", nil, 401},
		{"stop with the cookie only", "POST", "/api/runs/" + r.ID + "/stop", "", "", "", cookie, 401},
		{"retry with the cookie only", "POST", "/api/runs/" + r.ID + "/retry", "", "", "", cookie, 401},
		{"rebinding: another Host", "GET", "/api/runs", "evil.example:80", "", tok, nil, 421},
		{"cross-origin", "GET", "/api/runs", "", "http://evil.example", tok, nil, 403},
		{"stop as GET", "GET", "/api/runs/" + r.ID + "/stop", "", "", tok, nil, 405},
		{"list with the header", "GET", "/api/runs", "", "", tok, nil, 200},
		{"list with the cookie", "GET", "/api/runs", "", "", "", cookie, 200},
		{"same origin", "GET", "/api/runs", "", "SELF", tok, nil, 200},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, e.base()+tt.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" {
				req.Host = tt.host
			}
			if tt.origin == "SELF" {
				req.Header.Set("Origin", e.base())
			} else if tt.origin != "" {
				req.Header.Set("Origin", tt.origin)
			}
			if tt.header != "" {
				req.Header.Set(tokenHeader, tt.header)
			}
			if tt.cookie != nil {
				req.AddCookie(tt.cookie)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, b)
			}
			if resp.Header.Get("Access-Control-Allow-Origin") != "" {
				t.Fatalf("a CORS header was sent")
			}
			if tt.want != 200 && (strings.Contains(string(b), r.ID) || strings.Contains(string(b), "secret-name")) {
				t.Fatalf("a refusal leaked run data: %s", b)
			}
			if tt.want == 200 && !strings.Contains(string(b), r.ID) {
				t.Fatalf("the list lacks the run: %s", b)
			}
		})
	}
	// The run was not stopped or retried by the refused POSTs.
	runs, err := e.c.List(context.Background(), nil)
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs after refused POSTs: %d, %v", len(runs), err)
	}
}

func TestListenErrors(t *testing.T) {
	e := startEnv(t)
	if _, err := Listen(e.c, Options{Addr: e.srv.ln.Addr().String()}); err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("port in use: %v", err)
	}
	if _, err := Listen(e.c, Options{Addr: "0.0.0.0:0"}); err == nil || !strings.Contains(err.Error(), "--allow-remote") {
		t.Fatalf("non-loopback: %v", err)
	}
}
