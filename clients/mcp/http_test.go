package mcp

import (
	"context"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

type bearer struct {
	token string
	rt    http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.rt.RoundTrip(r)
}

// Over HTTP the tools answer only requests with the bearer token.
func TestHTTPNeedsTheToken(t *testing.T) {
	d := startDaemon(t)
	token, err := NewToken()
	if err != nil || len(token) != 64 {
		t.Fatalf("token %q %v", token, err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- ServeHTTP(ctx, ln, New(d.c, Options{Workdir: t.TempDir()}), token) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	url := "http://" + ln.Addr().String() + Path
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}}`
	for _, auth := range []string{"", "Bearer wrong", "Bearer " + token[:63], token} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") == "" {
			t.Errorf("Authorization %q: %s, want 401 with WWW-Authenticate", auth, resp.Status)
		}
	}
	// With the token, the SDK's streamable client works.
	cl := mcpsdk.NewClient(&mcpsdk.Implementation{Name: "http-agent", Version: "1"}, nil)
	cs, err := cl.Connect(context.Background(), &mcpsdk.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil || len(tools.Tools) != 7 {
		t.Fatalf("tools over HTTP: %v %v", tools, err)
	}
	res, err := cs.CallTool(context.Background(), &mcpsdk.CallToolParams{Name: "list_compute_backends"})
	if err != nil || res.IsError || !strings.Contains(resultText(res), "available=true") {
		t.Fatalf("list_compute_backends over HTTP: %v %v", res, err)
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, tt := range []struct {
		addr   string
		remote bool
		ok     bool
	}{
		{"127.0.0.1:8765", false, true},
		{"[::1]:8765", false, true},
		{"localhost:8765", false, true},
		{"0.0.0.0:8765", false, false},
		{"192.168.1.10:8765", false, false},
		{"0.0.0.0:8765", true, true},
		{"8765", false, false},
	} {
		err := CheckLoopback(tt.addr, tt.remote)
		if (err == nil) != tt.ok {
			t.Errorf("CheckLoopback(%q, %v) = %v", tt.addr, tt.remote, err)
		}
	}
}

func TestTokenFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "token")
	tok, err := TokenFromFile(p)
	if err != nil || len(tok) != 64 {
		t.Fatalf("new token %q %v", tok, err)
	}
	st, err := os.Stat(p)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("token file %v %v", st, err)
	}
	again, err := TokenFromFile(p)
	if err != nil || again != tok {
		t.Errorf("token read back %q %v, want %q", again, err, tok)
	}
	if err := os.WriteFile(p, []byte("short\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := TokenFromFile(p); err == nil {
		t.Error("a 5-character token was accepted")
	}
}
