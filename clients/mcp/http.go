package mcp

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"time"

	mcpsdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/runbox/runbox/api/client"
)

// Path is where the HTTP server answers MCP requests.
const Path = "/mcp"

// NewToken returns a random bearer token (256 bits, hex).
func NewToken() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// TokenFromFile reads the token kept in path, or makes one and writes it
// there (mode 0600) when the file does not exist.
func TokenFromFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err == nil {
		tok := strings.TrimSpace(string(b))
		if len(tok) < 16 {
			return "", fmt.Errorf("token file %s holds %d characters: a token needs at least 16", path, len(tok))
		}
		return tok, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read token file: %w", err)
	}
	tok, err := NewToken()
	if err != nil {
		return "", err
	}
	if err := os.WriteFile(path, []byte(tok+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write token file: %w", err)
	}
	return tok, nil
}

// CheckLoopback refuses a listen address that is not on a loopback
// interface, unless remote access is allowed.
func CheckLoopback(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--http %q: want HOST:PORT, e.g. 127.0.0.1:8765: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--http %s is not a loopback address: the MCP server runs commands on this machine, so it listens on 127.0.0.1 or ::1 unless --allow-remote is given", addr)
}

// Handler serves srv over streamable HTTP at Path, to requests that carry
// "Authorization: Bearer token"; others get 401.
func Handler(srv *mcpsdk.Server, token string) http.Handler {
	h := mcpsdk.NewStreamableHTTPHandler(func(*http.Request) *mcpsdk.Server { return srv }, &mcpsdk.StreamableHTTPOptions{
		SessionTimeout: 30 * time.Minute,
	})
	want := []byte("Bearer " + token)
	mux := http.NewServeMux()
	mux.Handle(Path, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="runbox"`)
			http.Error(w, "missing or wrong bearer token: send the header 'Authorization: Bearer TOKEN' with the token runbox mcp printed at start", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	return mux
}

// ServeHTTP serves srv on ln until ctx ends.
func ServeHTTP(ctx context.Context, ln net.Listener, srv *mcpsdk.Server, token string) error {
	hs := &http.Server{Handler: Handler(srv, token), ReadHeaderTimeout: 10 * time.Second}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("mcp http: %w", err)
	case <-ctx.Done():
	}
	shut, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	_ = hs.Shutdown(shut)
	return nil
}

// ServeOptions configure Serve.
type ServeOptions struct {
	Options
	// HTTP is the HOST:PORT to serve streamable HTTP on; empty: stdio.
	HTTP        string
	TokenFile   string
	AllowRemote bool
}

// Serve runs the server until ctx ends: over stdio (until the client
// closes stdin), or over HTTP, where it tells stderr the URL and, unless
// it is kept in a token file, the bearer token (once).
func Serve(ctx context.Context, c *client.Client, o ServeOptions, stderr io.Writer) error {
	srv := New(c, o.Options)
	if o.HTTP == "" {
		if err := srv.Run(ctx, stdioTransport(os.Stdin, os.Stdout)); err != nil && ctx.Err() == nil {
			return fmt.Errorf("mcp: %w", err)
		}
		return nil
	}
	if err := CheckLoopback(o.HTTP, o.AllowRemote); err != nil {
		return err
	}
	token, err := NewToken()
	if o.TokenFile != "" {
		token, err = TokenFromFile(o.TokenFile)
	}
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.HTTP)
	if err != nil {
		return fmt.Errorf("mcp: %w", err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt)
	defer stop()
	fmt.Fprintf(stderr, "runbox mcp: serving http://%s%s\n", ln.Addr(), Path)
	if o.TokenFile != "" {
		fmt.Fprintf(stderr, "runbox mcp: bearer token in %s\n", o.TokenFile)
	} else {
		fmt.Fprintf(stderr, "runbox mcp: Authorization: Bearer %s\n", token)
	}
	return ServeHTTP(ctx, ln, srv, token)
}
