package bundle_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/runbox/runbox/plugins/bundle"
)

// within fails the test when f has not returned after d: the faults
// below used to hang (a FIFO's open blocked 621 s, ignoring SIGTERM).
func within[T any](t *testing.T, d time.Duration, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	select {
	case v := <-done:
		return v
	case <-time.After(d):
		t.Fatalf("still running after %s", d)
		panic("unreachable")
	}
}

// localIndex writes index.json in a new directory with entries (urls as
// given) and returns its path.
func localIndex(t *testing.T, dir string, urls map[string]string) string {
	var ix bundle.Index
	for name, u := range urls {
		ix.Bundles = append(ix.Bundles, bundle.IndexEntry{Name: name, Version: "1.0.0", URL: u, SHA256: strings.Repeat("0", 64)})
	}
	b, _ := json.Marshal(ix)
	p := filepath.Join(dir, "index.json")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// An index's entries reach http(s) or regular files in a local index's
// own directory, nothing else: a FIFO, a device, a path out of the
// directory (.. or a symlink) and a file past the size limit are refused
// at once, without reading them.
func TestIndexEntryReachesOnlyItsDirectory(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	dir := filepath.Join(base, "index")
	os.Mkdir(dir, 0o755)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo.tar.gz"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(base, "outside.tar.gz"), []byte("secret"), 0o644)
	os.Symlink(filepath.Join(base, "outside.tar.gz"), filepath.Join(dir, "link.tar.gz"))
	big, _ := os.Create(filepath.Join(dir, "big.tar.gz"))
	big.Truncate(bundle.MaxBundleBytes + 1) // sparse: costs no disk
	big.Close()
	p := localIndex(t, dir, map[string]string{
		"fifo":     "fifo.tar.gz",
		"fifo-abs": "file://" + filepath.Join(dir, "fifo.tar.gz"),
		"zero":     "file:///dev/zero",
		"zero-abs": "/dev/zero",
		"dotdot":   "../outside.tar.gz",
		"abs-out":  filepath.Join(base, "outside.tar.gz"),
		"symlink":  "link.tar.gz",
		"big":      "big.tar.gz",
		"ftp":      "ftp://127.0.0.1/x.tar.gz",
	})
	ix, err := bundle.Fetcher{}.FetchIndex(ctx, bundle.IndexRef{Name: "local", URL: p})
	if err != nil {
		t.Fatal(err)
	}
	plugins := filepath.Join(t.TempDir(), "plugins")
	for _, tt := range []struct{ name, want string }{
		{"fifo", "not a regular file"},
		{"fifo-abs", "not a regular file"},
		{"zero", "not in the index's directory"},
		{"zero-abs", "not in the index's directory"},
		{"dotdot", "not in the index's directory"},
		{"abs-out", "not in the index's directory"},
		{"symlink", "not in the index's directory"},
		{"big", "larger than 64 MiB, the limit"},
		{"ftp", "only http(s) URLs"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := bundle.Find(ix.Bundles, tt.name, "")
			if err != nil {
				t.Fatal(err)
			}
			err = within(t, 10*time.Second, func() error {
				_, _, err := bundle.Fetcher{}.InstallEntry(ctx, e, plugins, bundle.Policy{AllowUnsigned: true})
				return err
			})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
			if tt.name != "big" && !errors.Is(err, bundle.ErrRefusedSource) {
				t.Fatalf("err = %v, want ErrRefusedSource", err)
			}
		})
	}
	// The same open without the check blocks: the FIFO is a real one.
	t.Run("baseline", func(t *testing.T) {
		opened := make(chan struct{})
		go func() {
			if fh, err := os.Open(filepath.Join(dir, "fifo.tar.gz")); err == nil {
				fh.Close()
			}
			close(opened)
		}()
		select {
		case <-opened:
			t.Fatal("a plain open of the FIFO returned: the test does not provoke the hang")
		case <-time.After(300 * time.Millisecond):
		}
		w, _ := os.OpenFile(filepath.Join(dir, "fifo.tar.gz"), os.O_WRONLY, 0) // release it
		<-opened
		w.Close()
	})
}

// A local index may list a bundle beside it; it installs.
func TestLocalIndexInstallsBesideIt(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	dir := t.TempDir()
	out := filepath.Join(dir, "sub", "echo.tar.gz")
	os.Mkdir(filepath.Dir(out), 0o755)
	if _, err := bundle.Pack(srcDir(t, "echo-bundle", "1.0.0"), out, priv); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(out)
	sum := sha256.Sum256(b)
	ix, _ := json.Marshal(bundle.Index{Bundles: []bundle.IndexEntry{{Name: "echo-bundle", Version: "1.0.0", URL: "sub/echo.tar.gz", SHA256: hex.EncodeToString(sum[:])}}})
	os.WriteFile(filepath.Join(dir, "index.json"), ix, 0o644)
	got, err := bundle.Fetcher{}.FetchIndex(context.Background(), bundle.IndexRef{Name: "l", URL: "file://" + filepath.Join(dir, "index.json")})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := (bundle.Fetcher{}).InstallEntry(context.Background(), got.Bundles[0], filepath.Join(t.TempDir(), "plugins"), bundle.Policy{AllowUnsigned: true}); err != nil {
		t.Fatal(err)
	}
}

// An http(s) index lists only http(s) downloads: a file:// entry is not
// read even when the file exists and is regular (a bare path resolves
// against the index's URL: it is fetched from the same server).
func TestHTTPIndexListsNoLocalFiles(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "id_rsa")
	os.WriteFile(secret, []byte("key"), 0o600)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(bundle.Index{Bundles: []bundle.IndexEntry{
			{Name: "a", Version: "1", URL: "file://" + secret, SHA256: "00"},
			{Name: "b", Version: "1", URL: secret, SHA256: "00"},
		}})
	}))
	defer srv.Close()
	ix, err := bundle.Fetcher{}.FetchIndex(context.Background(), bundle.IndexRef{Name: "h", URL: srv.URL + "/index.json"})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ix.Bundles {
		if e.Name == "b" {
			if !strings.HasPrefix(e.URL, srv.URL+"/") {
				t.Errorf("a bare path in an http index resolved to %s", e.URL)
			}
			continue
		}
		_, _, err := bundle.Fetcher{}.InstallEntry(context.Background(), e, t.TempDir(), bundle.Policy{AllowUnsigned: true})
		if !errors.Is(err, bundle.ErrRefusedSource) || !strings.Contains(err.Error(), "lists only http(s)") {
			t.Errorf("%s: err = %v", e.URL, err)
		}
	}
}

// The index the user configures may be anywhere, but must be a regular
// file of bounded size.
func TestIndexFileBounds(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	syscall.Mkfifo(fifo, 0o644)
	big := filepath.Join(dir, "big.json")
	fh, _ := os.Create(big)
	fh.Truncate(bundle.MaxIndexBytes + 1)
	fh.Close()
	for _, tt := range []struct{ url, want string }{
		{fifo, "not a regular file"},
		{"file://" + fifo, "not a regular file"},
		{"/dev/zero", "not a regular file"},
		{big, "larger than 16 MiB, the limit"},
	} {
		err := within(t, 10*time.Second, func() error {
			_, err := bundle.Fetcher{}.FetchIndex(context.Background(), bundle.IndexRef{Name: "x", URL: tt.url})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want %q", tt.url, err, tt.want)
		}
	}
}

// slowServer answers with a byte every 20 ms for ever (a stalled or
// hostile mirror), or, endless, with zeros as fast as it can.
func slowServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		endless := r.URL.Path == "/zeros"
		buf := make([]byte, 1<<20)
		for r.Context().Err() == nil {
			if endless {
				if _, err := w.Write(buf); err != nil {
					return
				}
				continue
			}
			w.Write([]byte(" "))
			w.(http.Flusher).Flush()
			time.Sleep(20 * time.Millisecond)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A download ends at its time limit, when its context ends, and past its
// size limit, whatever the server does.
func TestHTTPBounds(t *testing.T) {
	srv := slowServer(t)
	t.Run("timeout", func(t *testing.T) {
		err := within(t, 10*time.Second, func() error {
			_, err := bundle.Fetcher{Timeout: 300 * time.Millisecond}.FetchIndex(context.Background(), bundle.IndexRef{Name: "s", URL: srv.URL + "/slow"})
			return err
		})
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "the time limit for one download") {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		time.AfterFunc(200*time.Millisecond, cancel)
		err := within(t, 10*time.Second, func() error {
			_, err := bundle.Fetcher{}.FetchIndex(ctx, bundle.IndexRef{Name: "s", URL: srv.URL + "/slow"})
			return err
		})
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
	})
	t.Run("size", func(t *testing.T) {
		err := within(t, 30*time.Second, func() error {
			_, err := bundle.Fetcher{}.FetchIndex(context.Background(), bundle.IndexRef{Name: "s", URL: srv.URL + "/zeros"})
			return err
		})
		if err == nil || !strings.Contains(err.Error(), "larger than 16 MiB, the limit") {
			t.Fatalf("err = %v", err)
		}
	})
}

// SIGTERM ends a process stuck on a stalled index promptly, the way
// runbox's main wires it (signal.NotifyContext on SIGTERM).
func TestSIGTERMEndsAFetch(t *testing.T) {
	if u := os.Getenv("RUNBOX_TEST_FETCH_URL"); u != "" {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
		defer stop()
		fmt.Println("fetching")
		_, err := bundle.Fetcher{}.FetchIndex(ctx, bundle.IndexRef{Name: "s", URL: u})
		fmt.Println("ended:", err)
		return
	}
	srv := slowServer(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestSIGTERMEndsAFetch$", "-test.v")
	cmd.Env = append(os.Environ(), "RUNBOX_TEST_FETCH_URL="+srv.URL+"/slow")
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // let it reach the download
	cmd.Process.Signal(syscall.SIGTERM)
	err := within(t, 10*time.Second, func() error { return cmd.Wait() })
	if err != nil || !strings.Contains(out.String(), "ended:") || !strings.Contains(out.String(), "context canceled") {
		t.Fatalf("err = %v, output:\n%s", err, out.String())
	}
}
