package egress

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Limits that keep a run from turning the proxy into a load on its host.
const (
	// DefaultMaxConns is how many connections a proxy serves at once; the
	// next wait in the kernel's accept queue (then are refused by it), so
	// a flood costs the proxy nothing beyond these.
	DefaultMaxConns = 128
	// maxHeader bounds a request's head; headerTimeout is how long a
	// client may take to send it.
	maxHeader     = 64 << 10
	headerTimeout = 15 * time.Second
	dialTimeout   = 15 * time.Second
	// maxKeys bounds how many distinct refused host:port pairs are kept;
	// further ones are counted together.
	maxKeys = 256
)

// Refusal is one connection the proxy did not forward.
type Refusal struct {
	Host   string    `json:"host"`
	Port   int       `json:"port"`
	Time   time.Time `json:"time"`
	Reason string    `json:"reason"`
}

// Blocked is a summary of refusals to one host:port.
type Blocked struct {
	Host   string    `json:"host"`
	Port   int       `json:"port"`
	Count  int64     `json:"count"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
	Reason string    `json:"reason"`
}

// Report is what a proxy did: connections forwarded and refused.
type Report struct {
	Allowed  []string  `json:"allowed"`
	Proxied  int64     `json:"proxied"`
	Refused  int64     `json:"refused"`
	Blocked  []Blocked `json:"blocked,omitempty"`
	Overflow int64     `json:"overflow,omitempty"` // refusals past the distinct pairs kept
}

// Summary is the report in one line: "blocked 3 connections: example.org:443".
func (r Report) Summary() string {
	if r.Refused == 0 {
		return ""
	}
	var names []string
	for _, b := range r.Blocked {
		names = append(names, net.JoinHostPort(b.Host, strconv.Itoa(b.Port)))
	}
	if r.Overflow > 0 {
		names = append(names, "…")
	}
	noun := "connections"
	if r.Refused == 1 {
		noun = "connection"
	}
	return fmt.Sprintf("blocked %d %s: %s", r.Refused, noun, strings.Join(names, ", "))
}

// Proxy forwards a run's HTTP and CONNECT requests to allowed hosts.
type Proxy struct {
	Allow List
	// Hosts maps names to addresses ahead of the host's resolver, like
	// curl --resolve (a mirror on this machine; tests map names to
	// loopback servers).
	Hosts map[string]string
	// MaxConns bounds concurrent connections (DefaultMaxConns when 0).
	MaxConns int
	// OnRefuse is told of each refusal, as it happens (it must not block).
	OnRefuse func(Refusal)

	dialer net.Dialer

	mu       sync.Mutex
	proxied  int64
	refused  int64
	overflow int64
	blocked  map[string]*Blocked
}

// Serve accepts on l until it is closed or ctx ends. It returns nil then.
func (p *Proxy) Serve(ctx context.Context, l net.Listener) error {
	max := p.MaxConns
	if max <= 0 {
		max = DefaultMaxConns
	}
	slots := make(chan struct{}, max)
	stop := context.AfterFunc(ctx, func() { l.Close() })
	defer stop()
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		c, err := l.Accept()
		if err != nil {
			<-slots
			if errors.Is(err, net.ErrClosed) || ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-slots }()
			stopConn := context.AfterFunc(ctx, func() { c.Close() })
			defer stopConn()
			p.handle(ctx, c)
		}()
	}
}

// Report is what the proxy did so far.
func (p *Proxy) Report() Report {
	p.mu.Lock()
	defer p.mu.Unlock()
	r := Report{Allowed: p.Allow.Strings(), Proxied: p.proxied, Refused: p.refused, Overflow: p.overflow}
	for _, b := range p.blocked {
		r.Blocked = append(r.Blocked, *b)
	}
	sort.Slice(r.Blocked, func(i, j int) bool { return r.Blocked[i].First.Before(r.Blocked[j].First) })
	return r
}

func (p *Proxy) refuse(host string, port int, reason string) {
	now := time.Now().UTC()
	p.mu.Lock()
	p.refused++
	key := net.JoinHostPort(host, strconv.Itoa(port))
	b := p.blocked[key]
	switch {
	case b != nil:
		b.Count++
		b.Last = now
	case len(p.blocked) < maxKeys:
		if p.blocked == nil {
			p.blocked = map[string]*Blocked{}
		}
		p.blocked[key] = &Blocked{Host: host, Port: port, Count: 1, First: now, Last: now, Reason: reason}
	default:
		p.overflow++
	}
	p.mu.Unlock()
	if p.OnRefuse != nil {
		p.OnRefuse(Refusal{Host: host, Port: port, Time: now, Reason: reason})
	}
}

func (p *Proxy) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(headerTimeout))
	hl := &headLimit{r: c, left: maxHeader}
	br := bufio.NewReaderSize(hl, 32<<10)
	req, err := http.ReadRequest(br)
	hl.left = -1 // the head is read: no limit past it
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "runbox egress proxy: a request line and headers expected (HTTP_PROXY/HTTPS_PROXY)")
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	connect := req.Method == http.MethodConnect
	hostport := req.Host
	if !connect {
		if req.URL.Scheme != "http" || req.URL.Host == "" {
			writeStatus(c, http.StatusBadRequest, "runbox egress proxy: only absolute http:// URLs and CONNECT are proxied")
			return
		}
		hostport = req.URL.Host
	}
	host, port, err := splitHostPort(hostport, connect)
	if err != nil {
		writeStatus(c, http.StatusBadRequest, "runbox egress proxy: "+err.Error())
		return
	}
	if !p.Allow.Allows(host, port) {
		reason := "not in --allow-net"
		if net.ParseIP(strings.Trim(host, "[]")) != nil {
			reason = "a literal address (only allowed names are reached)"
		}
		p.refuse(host, port, reason)
		writeStatus(c, http.StatusForbidden, fmt.Sprintf("runbox egress proxy: %s:%d is %s (allowed: %s)", host, port, reason, strings.Join(p.Allow.Strings(), ", ")))
		return
	}
	up, err := p.dial(ctx, host, port)
	if err != nil {
		p.refuse(host, port, err.Error())
		writeStatus(c, http.StatusBadGateway, fmt.Sprintf("runbox egress proxy: %s:%d is allowed but %v", host, port, err))
		return
	}
	defer up.Close()
	p.mu.Lock()
	p.proxied++
	p.mu.Unlock()
	if connect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
			return
		}
		pipe(c, io.MultiReader(bufferedPart(br), c), up)
		return
	}
	// Plain HTTP: one request per connection, in origin form.
	req.Header.Del("Proxy-Connection")
	req.Header.Del("Proxy-Authorization")
	req.Close = true
	req.RequestURI = ""
	go func() { _ = req.Write(up) }() // the body streams as the client sends it
	_, _ = io.Copy(c, up)
}

// headLimit reads at most left bytes while left >= 0: a request head
// larger than that fails to parse instead of growing without bound.
type headLimit struct {
	r    io.Reader
	left int64
}

func (h *headLimit) Read(b []byte) (int, error) {
	if h.left < 0 {
		return h.r.Read(b)
	}
	if h.left == 0 {
		return 0, errors.New("request head too large")
	}
	if int64(len(b)) > h.left {
		b = b[:h.left]
	}
	n, err := h.r.Read(b)
	h.left -= int64(n)
	return n, err
}

// bufferedPart is what br holds already, without reading further.
func bufferedPart(br *bufio.Reader) io.Reader {
	b, _ := br.Peek(br.Buffered())
	return strings.NewReader(string(b))
}

// pipe copies both ways until either side ends.
func pipe(c net.Conn, fromClient io.Reader, up net.Conn) {
	done := make(chan struct{}, 2)
	go func() {
		_, _ = io.Copy(up, fromClient)
		if tc, ok := up.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() {
		_, _ = io.Copy(c, up)
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.CloseWrite()
		}
		done <- struct{}{}
	}()
	<-done
	<-done
}

func (p *Proxy) dial(ctx context.Context, host string, port int) (net.Conn, error) {
	addr := host
	if a, ok := p.Hosts[host]; ok {
		addr = a
	} else {
		ctx, cancel := context.WithTimeout(ctx, dialTimeout)
		ips, err := net.DefaultResolver.LookupHost(ctx, host)
		cancel()
		if err != nil || len(ips) == 0 {
			return nil, fmt.Errorf("does not resolve: %v", err)
		}
		addr = ips[0]
	}
	ctx, cancel := context.WithTimeout(ctx, dialTimeout)
	defer cancel()
	conn, err := p.dialer.DialContext(ctx, "tcp", net.JoinHostPort(addr, strconv.Itoa(port)))
	if err != nil {
		return nil, fmt.Errorf("cannot be reached: %v", err)
	}
	return conn, nil
}

func splitHostPort(hp string, connect bool) (string, int, error) {
	h, ps, err := net.SplitHostPort(hp)
	if err != nil {
		if connect {
			return "", 0, fmt.Errorf("CONNECT %q: want HOST:PORT", hp)
		}
		h, ps = hp, "80"
	}
	port, err := strconv.Atoi(ps)
	if err != nil || port < 1 || port > 65535 {
		return "", 0, fmt.Errorf("bad port in %q", hp)
	}
	return strings.ToLower(strings.TrimSuffix(h, ".")), port, nil
}

func writeStatus(c net.Conn, code int, msg string) {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s\n",
		code, http.StatusText(code), len(msg)+1, msg)
}

// Env is what a run behind a proxy at addr (127.0.0.1:PORT) gets: both
// spellings, as tools read one or the other; NO_PROXY keeps its own
// loopback servers direct.
func Env(addr string) []string {
	u := "http://" + addr
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "http_proxy=" + u, "https_proxy=" + u,
		"ALL_PROXY=" + u, "all_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
}
