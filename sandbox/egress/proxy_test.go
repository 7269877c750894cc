package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// startProxy serves p on a loopback port and returns its address.
func startProxy(t *testing.T, p *Proxy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = p.Serve(ctx, l); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return l.Addr().String()
}

func port(t *testing.T, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	return u.Port()
}

func client(proxyAddr string, insecure bool) *http.Client {
	pu, _ := url.Parse("http://" + proxyAddr)
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		Proxy:           http.ProxyURL(pu),
		TLSClientConfig: &tls.Config{InsecureSkipVerify: insecure}, // the test server's own certificate
	}}
}

// TestProxyForwardsOnlyAllowedNames: an allowed name is reached over
// plain HTTP and through CONNECT (TLS); another name, a literal address
// and an allowed name that does not resolve are refused with a reason
// the client reads, and each refusal is recorded.
func TestProxyForwardsOnlyAllowedNames(t *testing.T) {
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "plain %s %s host=%s body=%s", r.Method, r.URL.Path, r.Host, body)
	}))
	defer plain.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "secure ", r.URL.Path)
	}))
	defer tlsSrv.Close()
	pp, tp := port(t, plain.URL), port(t, tlsSrv.URL)
	allow, err := Parse([]string{"allowed.test:" + pp, "allowed.test:" + tp, "nxdomain.invalid:" + pp})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var events []Refusal
	p := &Proxy{Allow: allow, Hosts: map[string]string{"allowed.test": "127.0.0.1", "other.test": "127.0.0.1"},
		OnRefuse: func(r Refusal) { mu.Lock(); events = append(events, r); mu.Unlock() }}
	c := client(startProxy(t, p), true)

	get := func(u string) (int, string) {
		t.Helper()
		resp, err := c.Get(u)
		if err != nil {
			return 0, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("http://allowed.test:" + pp + "/x"); code != 200 || body != "plain GET /x host=allowed.test:"+pp+" body=" {
		t.Errorf("plain allowed: %d %q", code, body)
	}
	resp, err := c.Post("http://allowed.test:"+pp+"/up", "text/plain", strings.NewReader("payload"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(b), "body=payload") {
		t.Errorf("POST body not forwarded: %q", b)
	}
	if code, body := get("https://allowed.test:" + tp + "/s"); code != 200 || body != "secure /s" {
		t.Errorf("CONNECT allowed: %d %q", code, body)
	}
	// Refused: a name off the list (though it resolves), a literal address
	// of the very server, an allowed port-less name on another port.
	if code, body := get("http://other.test:" + pp + "/"); code != 403 || !strings.Contains(body, "other.test:"+pp+" is not in --allow-net") {
		t.Errorf("other name: %d %q", code, body)
	}
	if code, _ := get("https://other.test:" + tp + "/"); code != 0 {
		t.Errorf("CONNECT to another name got through: %d", code)
	}
	if code, body := get("http://127.0.0.1:" + pp + "/"); code != 403 || !strings.Contains(body, "literal address") {
		t.Errorf("literal address: %d %q", code, body)
	}
	if code, body := get("http://nxdomain.invalid:" + pp + "/"); code != 502 || !strings.Contains(body, "does not resolve") {
		t.Errorf("unresolvable allowed name: %d %q", code, body)
	}

	rep := p.Report()
	if rep.Refused != 4 || rep.Proxied != 3 {
		t.Errorf("report: refused %d proxied %d, want 4 and 3: %+v", rep.Refused, rep.Proxied, rep)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(events) != 4 {
		t.Fatalf("events: %+v", events)
	}
	want := []string{"other.test", "other.test", "127.0.0.1", "nxdomain.invalid"}
	for i, e := range events {
		if e.Host != want[i] || e.Time.IsZero() || e.Port == 0 {
			t.Errorf("event %d = %+v, want host %s with port and time", i, e, want[i])
		}
	}
	if !strings.Contains(events[3].Reason, "does not resolve") {
		t.Errorf("the unresolvable name's event says %q", events[3].Reason)
	}
	if s := rep.Summary(); !strings.HasPrefix(s, "blocked 4 connections: other.test:"+pp) {
		t.Errorf("summary %q", s)
	}
}

// TestProxyRefusesGarbage: what is not an HTTP proxy request gets a 400
// and nothing is dialled.
func TestProxyRefusesGarbage(t *testing.T) {
	p := &Proxy{}
	addr := startProxy(t, p)
	for _, in := range []string{"\x16\x03\x01garbage\r\n\r\n", "GET /relative HTTP/1.1\r\nHost: x\r\n\r\n", "CONNECT nohost HTTP/1.1\r\n\r\n"} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(c, in)
		line, _ := bufio.NewReader(c).ReadString('\n')
		c.Close()
		if !strings.HasPrefix(line, "HTTP/1.1 400") {
			t.Errorf("%q: got %q", in, line)
		}
	}
	// A head larger than the limit is refused, not buffered.
	c, _ := net.Dial("tcp", addr)
	go func() {
		io.WriteString(c, "GET http://a.test/ HTTP/1.1\r\nX: ")
		io.WriteString(c, strings.Repeat("a", 2*maxHeader))
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	line, _ := bufio.NewReader(c).ReadString('\n')
	c.Close()
	if !strings.HasPrefix(line, "HTTP/1.1 400") {
		t.Errorf("huge head: got %q", line)
	}
}

// TestProxyFloodIsBounded: a run that opens many connections and sends
// nothing holds at most MaxConns of the proxy's goroutines; the rest wait
// in the kernel's queue; once they go, the proxy serves again.
func TestProxyFloodIsBounded(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	allow, _ := Parse([]string{"allowed.test:" + port(t, srv.URL)})
	p := &Proxy{Allow: allow, Hosts: map[string]string{"allowed.test": "127.0.0.1"}, MaxConns: 4}
	addr := startProxy(t, p)
	before := runtime.NumGoroutine()
	var conns []net.Conn
	for range 300 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			break // the accept queue is full: the kernel refuses, as it should
		}
		conns = append(conns, c)
	}
	time.Sleep(200 * time.Millisecond)
	if grew := runtime.NumGoroutine() - before; grew > 4*2+2 {
		t.Errorf("%d idle connections grew the proxy by %d goroutines; want at most about MaxConns", len(conns), grew)
	}
	for _, c := range conns {
		c.Close()
	}
	resp, err := client(addr, false).Get("http://allowed.test:" + port(t, srv.URL) + "/")
	if err != nil {
		t.Fatalf("after the flood: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("after the flood: %d", resp.StatusCode)
	}
}

// TestReportKeepsBoundedKeys: refusals to ever new names are counted, but
// only maxKeys distinct pairs are kept.
func TestReportKeepsBoundedKeys(t *testing.T) {
	p := &Proxy{}
	for i := range maxKeys + 50 {
		p.refuse(fmt.Sprintf("h%d.test", i), 443, "x")
	}
	r := p.Report()
	if len(r.Blocked) != maxKeys || r.Overflow != 50 || r.Refused != maxKeys+50 {
		t.Errorf("kept %d, overflow %d, refused %d", len(r.Blocked), r.Overflow, r.Refused)
	}
}
