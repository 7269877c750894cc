// Package ui is runbox's local web dashboard (`runbox ui`): a runs list and
// a run page with live log, progress, metric charts (uPlot), failure card,
// lineage and stop/retry. Like the CLI and the MCP server it is a client
// of the daemon (api/client); its assets are embedded, so it works offline.
//
// Security: it listens on loopback unless told otherwise; a random token,
// printed in the URL, is required by every page and API call (a cookie set
// from the URL, or the X-Runbox-Token header); state-changing calls are
// POST and must carry the header, so a cross-site form cannot make them;
// the Host header must name this server (DNS rebinding); no CORS headers
// are ever sent and a cross-origin Origin is refused.
package ui

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/runbox/runbox/api/client"
)

//go:embed assets
var assets embed.FS

// Options configure the dashboard.
type Options struct {
	// Addr is HOST:PORT to listen on (default 127.0.0.1:0, any free port).
	Addr string
	// AllowRemote permits a non-loopback Addr.
	AllowRemote bool
	// Token is the access token; empty means a new random one.
	Token string
	// Poll is how often the server asks the daemon for changes to push to
	// the open pages (default 500ms). The browser never polls.
	Poll time.Duration
}

// Server is a listening dashboard.
type Server struct {
	c     *client.Client
	o     Options
	ln    net.Listener
	token string
	hosts map[string]bool
}

const (
	cookieName  = "runbox_ui"
	tokenHeader = "X-Runbox-Token"
)

// Listen opens the dashboard's socket.
func Listen(c *client.Client, o Options) (*Server, error) {
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.Poll <= 0 {
		o.Poll = 500 * time.Millisecond
	}
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return nil, fmt.Errorf("ui: bad --addr %q: %w", o.Addr, err)
	}
	if !o.AllowRemote && !isLoopback(host) {
		return nil, fmt.Errorf("ui: %s is not a loopback address; the dashboard can stop and retry runs, so pass --allow-remote to serve it beyond this machine", o.Addr)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		if errors.Is(err, syscall.EADDRINUSE) {
			return nil, fmt.Errorf("ui: %s is already in use (another runbox ui or another program); pick another with --addr 127.0.0.1:PORT, or :0 for any free port", o.Addr)
		}
		return nil, fmt.Errorf("ui: listen on %s: %w", o.Addr, err)
	}
	tok := o.Token
	if tok == "" {
		b := make([]byte, 24)
		if _, err := rand.Read(b); err != nil {
			ln.Close()
			return nil, fmt.Errorf("ui: token: %w", err)
		}
		tok = hex.EncodeToString(b)
	}
	s := &Server{c: c, o: o, ln: ln, token: tok, hosts: map[string]bool{}}
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	s.hosts[ln.Addr().String()] = true
	for _, h := range []string{"localhost", "127.0.0.1", "[::1]", host} {
		if h != "" && !strings.HasPrefix(h, "0.0.0.0") && h != "::" {
			s.hosts[net.JoinHostPort(strings.Trim(h, "[]"), port)] = true
		}
	}
	return s, nil
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// URL is the address to open, token included.
func (s *Server) URL() string {
	addr := s.ln.Addr().(*net.TCPAddr)
	host := addr.IP.String()
	if addr.IP.IsUnspecified() {
		host = "127.0.0.1"
	}
	return fmt.Sprintf("http://%s/?token=%s", net.JoinHostPort(host, fmt.Sprint(addr.Port)), s.token)
}

// Serve serves until ctx ends.
func (s *Server) Serve(ctx context.Context) error {
	hs := &http.Server{Handler: s.Handler(ctx), ReadHeaderTimeout: 10 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	err := hs.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// Serve listens, prints the URL to w and serves until ctx ends.
func Serve(ctx context.Context, c *client.Client, o Options, w io.Writer) error {
	s, err := Listen(c, o)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "runbox dashboard: %s\n(the token in the URL is the key to it: do not share it; Ctrl-C stops)\n", s.URL())
	return s.Serve(ctx)
}

// Handler is the dashboard with its security checks in front.
func (s *Server) Handler(ctx context.Context) http.Handler {
	mux := http.NewServeMux()
	static, _ := fs.Sub(assets, "assets")
	mux.Handle("GET /assets/", http.StripPrefix("/assets/", http.FileServerFS(static)))
	mux.HandleFunc("GET /{$}", s.index)
	s.apiRoutes(ctx, mux)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "no-referrer") // the token must not leak in a Referer
		h.Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; frame-ancestors 'none'")
		if !s.hosts[r.Host] {
			http.Error(w, "runbox ui: unexpected Host header", http.StatusMisdirectedRequest)
			return
		}
		if o := r.Header.Get("Origin"); o != "" && o != "http://"+r.Host {
			http.Error(w, "runbox ui: cross-origin requests are refused", http.StatusForbidden)
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/assets/") && r.URL.Path != "/" && !s.authorized(r) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error":"missing or wrong token: open the URL runbox ui printed","code":"unauthorized"}`)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// authorized: the token in the header, or (for GETs only: a page and its
// event stream cannot set headers) in the cookie the URL set.
func (s *Server) authorized(r *http.Request) bool {
	if t := r.Header.Get(tokenHeader); t != "" {
		return s.tokenOK(t)
	}
	if r.Method != http.MethodGet {
		return false
	}
	c, err := r.Cookie(cookieName)
	return err == nil && s.tokenOK(c.Value)
}

func (s *Server) tokenOK(t string) bool {
	return subtle.ConstantTimeCompare([]byte(t), []byte(s.token)) == 1
}

// index serves the page. Opened with ?token=, it sets the cookie and
// redirects to the bare URL, so the token leaves the address bar and the
// history.
func (s *Server) index(w http.ResponseWriter, r *http.Request) {
	if t := r.URL.Query().Get("token"); t != "" {
		if !s.tokenOK(t) {
			http.Error(w, "runbox ui: wrong token: open the URL runbox ui printed", http.StatusUnauthorized)
			return
		}
		http.SetCookie(w, &http.Cookie{Name: cookieName, Value: s.token, Path: "/", HttpOnly: true, SameSite: http.SameSiteStrictMode})
		http.Redirect(w, r, "/", http.StatusSeeOther)
		return
	}
	if !s.authorized(r) {
		http.Error(w, "runbox ui: missing token: open the URL runbox ui printed", http.StatusUnauthorized)
		return
	}
	b, err := assets.ReadFile("assets/index.html")
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	// The page reads the token for its POSTs from this meta tag: it is
	// the same-origin page the cookie already opened.
	page := strings.Replace(string(b), "{{TOKEN}}", s.token, 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = io.WriteString(w, page)
}
