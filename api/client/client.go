// Package client is the transport of the runbox API (package api): it talks
// to the daemon over its unix socket with net/http, starting the daemon on
// demand when none answers. The CLI, the MCP server and the dashboard all
// reach the daemon through it.
package client

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/internal/paths"
	"github.com/runbox/runbox/sandbox/runlog"
)

// retryBackoff are the pauses before sending a request that got no answer
// again; its length is the number of retries.
var retryBackoff = []time.Duration{20 * time.Millisecond, 100 * time.Millisecond, 300 * time.Millisecond}

// Options say where the daemon is and how to start it.
type Options struct {
	Home   string
	Socket string
	// Exe and Args start a daemon when none answers (Exe empty: never).
	Exe  string
	Args []string
	// StartTimeout bounds waiting for a started daemon (default 10s).
	StartTimeout time.Duration
}

// Client is a connection to the daemon. It is safe for concurrent use.
type Client struct {
	o    Options
	http *http.Client
	mu   sync.Mutex // guards o.Socket, which the home's pointer may change
}

// Error is an error answer from the daemon.
type Error struct {
	Status int
	Code   string
	Msg    string
}

func (e *Error) Error() string { return e.Msg }

// IsNotFound reports whether err says the run or plan does not exist.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Code == "not_found"
}

// ErrNoDaemon means no daemon answered and none could be started.
var ErrNoDaemon = errors.New("runbox daemon not reachable")

// New returns a client; it connects lazily.
func New(o Options) *Client {
	if o.StartTimeout == 0 {
		o.StartTimeout = 10 * time.Second
	}
	c := &Client{o: o}
	c.http = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return c.dial(ctx) },
		// The answers are framed logs and JSON; compressing them on a
		// unix socket costs CPU and buys nothing.
		DisableCompression:  true,
		MaxIdleConnsPerHost: 4,
	}}
	return c
}

// CloseIdle closes idle connections to the daemon.
func (c *Client) CloseIdle() { c.http.CloseIdleConnections() }

// dial connects to the socket, else to the one the home's pointer names
// (a daemon started with another environment), starting the daemon once
// if neither answers.
func (c *Client) dial(ctx context.Context) (net.Conn, error) {
	var d net.Dialer
	sock := c.socket()
	conn, err := d.DialContext(ctx, "unix", sock)
	if err != nil && daemonAbsent(err) {
		if conn, perr := c.dialPointed(ctx); perr == nil {
			return conn, nil
		}
	}
	if err == nil || c.o.Exe == "" || !daemonAbsent(err) {
		if err != nil {
			return nil, fmt.Errorf("%w at %s: %v", ErrNoDaemon, sock, err)
		}
		return conn, nil
	}
	if err := c.startDaemon(ctx); err != nil {
		return nil, err
	}
	sock = c.socket()
	conn, err = d.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, fmt.Errorf("%w at %s: %v", ErrNoDaemon, sock, err)
	}
	return conn, nil
}

func (c *Client) socket() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.o.Socket
}

// dialPointed connects to the socket the home's pointer names, when that
// is another one than ours and answers; from then on it is ours.
func (c *Client) dialPointed(ctx context.Context) (net.Conn, error) {
	p := paths.PointedSocket(c.o.Home)
	if p == "" || p == c.socket() {
		return nil, ErrNoDaemon
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", p)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.o.Socket = p
	c.mu.Unlock()
	return conn, nil
}

func daemonAbsent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// startDaemon launches a detached daemon and waits for its socket. If it
// dies first, its log's last lines become the error. Many clients may race
// to start one: a loser's daemon exits because the winner holds the home
// lock, and the loser then waits for the winner's socket; if the winner
// itself went away before listening (an idle daemon shutting down as we
// arrived), the loser starts another.
func (c *Client) startDaemon(ctx context.Context) error {
	if err := os.MkdirAll(c.o.Home, 0o700); err != nil {
		return fmt.Errorf("%w: %v", ErrNoDaemon, err)
	}
	logPath := filepath.Join(c.o.Home, "daemon.log")
	deadline := time.NewTimer(c.o.StartTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for attempt := 0; ; attempt++ {
		st, exited, err := c.spawnDaemon(logPath)
		if err != nil {
			return err
		}
		var exitErr error
	wait:
		for {
			if conn, err := net.Dial("unix", c.socket()); err == nil {
				conn.Close()
				return nil
			}
			// A daemon that owns the home may listen elsewhere (its
			// environment named another place): its pointer says where.
			if conn, err := c.dialPointed(ctx); err == nil {
				conn.Close()
				return nil
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-deadline.C:
				return fmt.Errorf("%w: daemon did not open %s within %s (see %s)", ErrNoDaemon, c.socket(), c.o.StartTimeout, logPath)
			case exitErr = <-exited:
				exited = nil
				if !lockOwnerAlive(c.o.Home) {
					break wait
				}
				// Another client's daemon owns the home: wait for its socket.
			case <-tick.C:
				if exited == nil && !lockOwnerAlive(c.o.Home) {
					break wait
				}
			}
		}
		if conn, err := net.Dial("unix", c.socket()); err == nil {
			conn.Close()
			return nil
		}
		if exitErr == nil || attempt >= 3 {
			if exitErr == nil {
				exitErr = errors.New("the daemon that owned the home exited")
			}
			return fmt.Errorf("%w: daemon exited (%v): %s", ErrNoDaemon, exitErr, lastLine(logPath, st))
		}
		// Our daemon died without another one owning the home. If it
		// failed on its own (bad home, socket path too long), starting it
		// again gives the same answer; only retry when it lost a race.
		if !strings.Contains(lastLine(logPath, st), "already running") {
			return fmt.Errorf("%w: daemon exited (%v): %s", ErrNoDaemon, exitErr, lastLine(logPath, st))
		}
	}
}

// spawnDaemon starts one detached daemon and reports its exit on the
// returned channel; st is the daemon log's size before it started.
func (c *Client) spawnDaemon(logPath string) (os.FileInfo, <-chan error, error) {
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: open daemon log: %v", ErrNoDaemon, err)
	}
	defer logf.Close()
	st, _ := logf.Stat()
	cmd := exec.Command(c.o.Exe, c.o.Args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("%w: start daemon: %v", ErrNoDaemon, err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return st, exited, nil
}

// lockOwnerAlive reports whether the pid recorded in home/daemon.lock is a
// live process. It reads the file rather than probing the flock, because a
// probe would itself make a starting daemon's lock attempt fail. An empty
// file means a daemon is between taking the lock and writing its pid.
func lockOwnerAlive(home string) bool {
	b, err := os.ReadFile(filepath.Join(home, "daemon.lock"))
	if err != nil {
		return false
	}
	s := strings.TrimSpace(string(b))
	if s == "" {
		return true
	}
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 0 {
		return false
	}
	err = syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

func lastLine(path string, before os.FileInfo) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "see " + path
	}
	if before != nil && int64(len(b)) >= before.Size() {
		b = b[before.Size():]
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// do sends a JSON request and decodes a JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, in, out any) error {
	resp, err := c.send(ctx, method, path, q, in)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("decode daemon answer: %w", err)
	}
	return nil
}

// send performs a request and turns non-2xx answers into *Error. The
// caller closes the answer's body.
//
// A request that got no answer at all (the connection was refused or reset:
// a daemon killed with -9 a moment ago, or one exiting as it went idle) is
// sent again, after starting a new daemon if none answers. That is safe
// for every call of this API: reads and stops are idempotent, and a
// submission carries an idempotency key, so sent twice it still creates
// one run.
// ErrNoID is returned for a request about a run (or plan) whose id is empty.
var ErrNoID = errors.New("a run id is required")

func (c *Client) send(ctx context.Context, method, path string, q url.Values, in any) (*http.Response, error) {
	return c.sendVia(ctx, c.http.Do, method, path, q, in)
}

// sendVia is send with the round trip do: the pooled Transport's, or
// streamTrip for a request that keeps its connection to the end.
func (c *Client) sendVia(ctx context.Context, do func(*http.Request) (*http.Response, error), method, path string, q url.Values, in any) (*http.Response, error) {
	var body []byte
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return nil, err
		}
		body = b
	}
	if strings.Contains(path, "//") || strings.HasSuffix(path, "/") {
		// An empty id: /v1/runs//logs would be cleaned to /v1/runs/logs,
		// and "run logs not found" blames the wrong thing.
		return nil, ErrNoID
	}
	u := "http://runbox" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var resp *http.Response
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		if in != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err = do(req)
		if err == nil {
			break
		}
		if ctxErr := ctx.Err(); ctxErr != nil {
			return nil, ctxErr
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if errors.Is(err, ErrNoDaemon) {
			return nil, err // the dial already tried to start one
		}
		if attempt >= len(retryBackoff) {
			return nil, fmt.Errorf("talk to the daemon at %s: %w", c.socket(), err)
		}
		c.http.CloseIdleConnections()
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(retryBackoff[attempt]):
		}
	}
	if resp.StatusCode/100 != 2 {
		defer resp.Body.Close()
		var e api.Error
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		if json.Unmarshal(b, &e) != nil || e.Error == "" {
			e.Error = fmt.Sprintf("daemon answered %s", resp.Status)
		}
		return nil, &Error{Status: resp.StatusCode, Code: e.Code, Msg: e.Error}
	}
	return resp, nil
}

// Health pings the daemon.
func (c *Client) Health(ctx context.Context) (api.Health, error) {
	var h api.Health
	return h, c.do(ctx, http.MethodGet, api.Prefix+"/health", nil, nil, &h)
}

// Backends lists sandbox backends.
func (c *Client) Backends(ctx context.Context) (api.Backends, error) {
	var b api.Backends
	return b, c.do(ctx, http.MethodGet, api.Prefix+"/backends", nil, nil, &b)
}

// Plan asks for a plan.
func (c *Client) Plan(ctx context.Context, req api.RunRequest) (*api.Plan, error) {
	var p api.Plan
	return &p, c.do(ctx, http.MethodPost, api.Prefix+"/plans", nil, req, &p)
}

// GetPlan fetches a plan.
func (c *Client) GetPlan(ctx context.Context, id string) (*api.Plan, error) {
	var p api.Plan
	return &p, c.do(ctx, http.MethodGet, api.Prefix+"/plans/"+url.PathEscape(id), nil, nil, &p)
}

// Submit starts a run (detached).
func (c *Client) Submit(ctx context.Context, req api.RunRequest) (*api.Run, error) {
	req.Attach = false
	withKey(&req)
	var r api.Run
	return &r, c.do(ctx, http.MethodPost, api.Prefix+"/runs", nil, req, &r)
}

// Get fetches a run.
func (c *Client) Get(ctx context.Context, id string) (*api.Run, error) {
	var r api.Run
	return &r, c.do(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id), nil, nil, &r)
}

// List lists runs, newest first.
func (c *Client) List(ctx context.Context, q url.Values) ([]*api.Run, error) {
	var l api.RunList
	return l.Runs, c.do(ctx, http.MethodGet, api.Prefix+"/runs", q, nil, &l)
}

// Stop asks a run to stop.
func (c *Client) Stop(ctx context.Context, id string, grace time.Duration) (*api.Run, error) {
	q := url.Values{}
	if grace > 0 {
		q.Set("grace", grace.String())
	}
	var r api.Run
	return &r, c.do(ctx, http.MethodPost, api.Prefix+"/runs/"+url.PathEscape(id)+"/stop", q, nil, &r)
}

// Wait waits up to timeout (0 = forever) for a run to end and returns it.
func (c *Client) Wait(ctx context.Context, id string, timeout time.Duration) (*api.Run, error) {
	q := url.Values{}
	if timeout > 0 {
		q.Set("timeout", timeout.String())
	}
	var r api.Run
	return &r, c.do(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id)+"/wait", q, nil, &r)
}

// Retry starts a new run of id's command linked to it.
func (c *Client) Retry(ctx context.Context, id string, req api.RunRequest) (*api.Run, error) {
	req.Attach = false
	withKey(&req)
	var r api.Run
	return &r, c.do(ctx, http.MethodPost, api.Prefix+"/runs/"+url.PathEscape(id)+"/retry", nil, req, &r)
}

// Events lists a run's events after seq.
func (c *Client) Events(ctx context.Context, id string, after uint64) ([]api.Event, error) {
	var l api.EventList
	q := url.Values{"after": {fmt.Sprint(after)}}
	return l.Events, c.do(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id)+"/events", q, nil, &l)
}

// Frame is one record of a log or attach stream. Data is valid only
// during the callback that receives it.
type Frame struct {
	Stream uint8
	Time   time.Time
	Data   []byte
}

// Logs streams a run's log; fn is called for each record.
func (c *Client) Logs(ctx context.Context, id string, q url.Values, fn func(Frame) error) error {
	resp, err := c.send(ctx, http.MethodGet, api.Prefix+"/runs/"+url.PathEscape(id)+"/logs", q, nil)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	return readFrames(resp.Body, fn)
}

// Attach submits a run and streams it: the created run, output records,
// progress, and finally the ended run, whose JSON (a api.Run) Attach
// returns, for the caller to decode what it needs of it.
func (c *Client) Attach(ctx context.Context, req api.RunRequest, fn func(Frame) error) (json.RawMessage, error) {
	req.Attach = true
	return c.attach(ctx, api.Prefix+"/runs", req, fn)
}

// AttachRetry is Attach for a retry of id.
func (c *Client) AttachRetry(ctx context.Context, id string, req api.RunRequest, fn func(Frame) error) (json.RawMessage, error) {
	req.Attach = true
	return c.attach(ctx, api.Prefix+"/runs/"+url.PathEscape(id)+"/retry", req, fn)
}

func (c *Client) attach(ctx context.Context, path string, req api.RunRequest, fn func(Frame) error) (json.RawMessage, error) {
	withKey(&req)
	resp, err := c.sendVia(ctx, c.streamTrip, http.MethodPost, path, nil, req)
	if err != nil {
		return nil, err
	}
	var (
		final  json.RawMessage
		runID  string
		output int // output records delivered, to resume after
	)
	err = readFrames(resp.Body, func(f Frame) error {
		switch f.Stream {
		case api.StreamFinal:
			if !json.Valid(f.Data) {
				return errors.New("daemon sent a malformed final record")
			}
			final = append(json.RawMessage(nil), f.Data...)
			return nil
		case api.StreamRun:
			var r struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(f.Data, &r) == nil {
				runID = r.ID
			}
		case api.StreamProgress, api.StreamSmokeStdout, api.StreamSmokeStderr:
		default:
			output++
		}
		return fn(f)
	})
	resp.Body.Close()
	if err == nil && final == nil {
		err = errors.New("daemon closed the stream before the run ended")
	}
	if err == nil || runID == "" || ctx.Err() != nil {
		return final, err
	}
	// The daemon went away mid-stream (killed, restarted): the run goes on
	// under its supervisor or container, so follow it from where the
	// stream broke, through the next daemon, to its end.
	return c.resume(ctx, runID, output, fn)
}

// streamTrip sends req on a connection of its own and reads the answer's
// head in this goroutine; the body reads from the connection, and closing
// it (or req's context ending) closes the connection. An attached run's
// stream holds its connection to the end, so the Transport's pool has
// nothing to reuse there, and its round trip hands the request between
// goroutines of its own (dialing, writing, reading): each hand-off a
// wake-up, a few tenths of a millisecond of `runbox run -- true` on a
// loaded machine (BENCHMARKS.md, issue 23).
func (c *Client) streamTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if err := req.Write(conn); err != nil {
		return fail(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return fail(err)
	}
	resp.Body = &connBody{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// connBody is a streamTrip answer's body: closing it closes the connection.
type connBody struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
}

func (b *connBody) Close() error {
	b.stop()
	err := b.ReadCloser.Close()
	b.conn.Close()
	return err
}

// resume follows run id's log after its first skip records, then returns
// its final record. Each step is retried through daemon restarts.
func (c *Client) resume(ctx context.Context, id string, skip int, fn func(Frame) error) (json.RawMessage, error) {
	var lastErr error
	for attempt := 0; attempt <= len(retryBackoff); attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(retryBackoff[attempt-1]):
			}
		}
		q := url.Values{"follow": {"1"}, "skip": {strconv.Itoa(skip)}}
		err := c.Logs(ctx, id, q, func(f Frame) error {
			skip++
			return fn(f)
		})
		if err != nil {
			lastErr = err
			continue
		}
		end, err := c.Wait(ctx, id, 0)
		if err != nil {
			lastErr = err
			continue
		}
		return json.Marshal(end)
	}
	return nil, fmt.Errorf("follow run %s: %w", id, lastErr)
}

// readFrames calls fn for each frame; a frame's Data is valid only until
// fn returns (one buffer serves the whole stream).
func readFrames(r io.Reader, fn func(Frame) error) error {
	br := bufio.NewReaderSize(r, 256<<10)
	var buf []byte
	for {
		s, t, data, err := runlog.ReadFrame(br, buf)
		if cap(data) > cap(buf) {
			buf = data[:0]
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("read daemon stream: %w", err)
		}
		if err := fn(Frame{Stream: s, Time: t, Data: data}); err != nil {
			return err
		}
	}
}

// withKey gives a submission its idempotency key, unless the caller chose
// one (to make a submission of its own idempotent across processes).
func withKey(req *api.RunRequest) {
	if req.IdempotencyKey == "" {
		// Unique, not secret: math/rand/v2's generator is seeded afresh in
		// every process.
		req.IdempotencyKey = fmt.Sprintf("%016x%016x", rand.Uint64(), rand.Uint64())
	}
}
