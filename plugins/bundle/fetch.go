package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// What an index may make runbox read. An index is a file someone else
// writes, so its entries reach only what an index should: http(s), or
// regular files in a local index's own directory. A FIFO would block the
// open forever, /dev/zero would fill memory, ../../.ssh/id_rsa would be
// hashed and its digest compared — none of them is a bundle.
const (
	// MaxIndexBytes bounds an index download.
	MaxIndexBytes = 16 << 20
	// MaxBundleBytes bounds a bundle download (a .tar.gz of a few
	// plugins; one Go plugin is ~3 MiB).
	MaxBundleBytes = 64 << 20
	// DefaultTimeout bounds one download when Fetcher.Timeout is 0.
	DefaultTimeout = 2 * time.Minute
)

// ErrRefusedSource is returned for an index or entry URL that points
// somewhere an index may not reach.
var ErrRefusedSource = errors.New("refused source")

// Fetcher downloads indexes and bundles.
type Fetcher struct {
	// Client is used for http(s) sources; nil: http.DefaultClient's
	// transport. Redirects to another host are refused in any case.
	Client *http.Client
	// Timeout bounds each download (connect to last byte); 0:
	// DefaultTimeout. The caller's context ends one sooner.
	Timeout time.Duration
}

func (f Fetcher) timeout() time.Duration {
	if f.Timeout > 0 {
		return f.Timeout
	}
	return DefaultTimeout
}

func isHTTP(u *url.URL) bool { return u != nil && (u.Scheme == "http" || u.Scheme == "https") }

// localPath returns the path src names when it is a path or a file://
// URL, and false for any other scheme.
func localPath(src string) (string, bool) {
	u, err := url.Parse(src)
	switch {
	case err != nil || u.Scheme == "":
		return src, true
	case u.Scheme == "file" && (u.Host == "" || u.Host == "localhost"):
		return u.Path, true
	case len(u.Scheme) == 1: // C:\... is not a URL
		return src, true
	}
	return "", false
}

// fetch copies the bytes at src into w, at most limit of them, within
// f's time bound and ctx. root is the directory a local src must lie in
// ("" allows no local src); anyLocal allows a file anywhere (the index
// the user configured).
func (f Fetcher) fetch(ctx context.Context, src, root string, anyLocal bool, limit int64, w io.Writer) error {
	ctx, cancel := context.WithTimeout(ctx, f.timeout())
	defer cancel()
	u, _ := url.Parse(src)
	var err error
	if isHTTP(u) {
		err = f.fetchHTTP(ctx, u, limit, w)
	} else if p, ok := localPath(src); !ok {
		return fmt.Errorf("%s: %w: only http(s) URLs or files in a local index's directory are fetched", src, ErrRefusedSource)
	} else {
		err = fetchLocal(ctx, p, root, anyLocal, limit, w)
	}
	if errors.Is(err, context.DeadlineExceeded) && ctx.Err() != nil {
		err = fmt.Errorf("%s: gave up after %s (the time limit for one download): %w", src, f.timeout(), err)
	}
	return err
}

func (f Fetcher) fetchHTTP(ctx context.Context, u *url.URL, limit int64, w io.Writer) error {
	src := u.String()
	var c http.Client
	if f.Client != nil {
		c = *f.Client
	}
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if req.URL.Host != u.Host {
			return fmt.Errorf("refused: %s redirects to another host, %s", src, req.URL.Host)
		}
		if req.URL.Scheme != u.Scheme && u.Scheme == "https" {
			return fmt.Errorf("refused: %s redirects from https to %s", src, req.URL.Scheme)
		}
		if len(via) >= 5 {
			return errors.New("too many redirects")
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src, nil)
	if err != nil {
		return err
	}
	resp, err := c.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", src, resp.Status)
	}
	if resp.ContentLength > limit {
		return tooLarge("GET "+src, limit)
	}
	return copyCapped(ctx, w, resp.Body, "GET "+src, limit)
}

// fetchLocal reads a regular file: within root, or p itself when
// anyLocal. The open does not block (O_NONBLOCK: a FIFO with no writer
// would), and what was opened is checked, not what the name was before.
func fetchLocal(ctx context.Context, p, root string, anyLocal bool, limit int64, w io.Writer) error {
	var fh *os.File
	var err error
	switch {
	case anyLocal:
		fh, err = os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	case root == "":
		return fmt.Errorf("%s: %w: an index served over http(s) lists only http(s) downloads", p, ErrRefusedSource)
	default:
		abs, aerr := filepath.Abs(p)
		if aerr != nil {
			return aerr
		}
		rel, rerr := filepath.Rel(root, abs)
		if rerr != nil {
			return fmt.Errorf("%s: %w: not in the index's directory %s", p, ErrRefusedSource, root)
		}
		if !filepath.IsLocal(rel) {
			return fmt.Errorf("%s: %w: not in the index's directory %s", p, ErrRefusedSource, root)
		}
		// os.Root refuses .. and symlinks that leave root.
		r, rerr := os.OpenRoot(root)
		if rerr != nil {
			return rerr
		}
		defer r.Close()
		fh, err = r.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("%w: %w: not in the index's directory %s", err, ErrRefusedSource, root)
		}
	}
	if err != nil {
		return err
	}
	defer fh.Close()
	st, err := fh.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s: %w: not a regular file (%s)", p, ErrRefusedSource, kind(st.Mode()))
	}
	if st.Size() > limit {
		return tooLarge(p, limit)
	}
	return copyCapped(ctx, w, fh, p, limit)
}

// kind names what a file that is not a regular file is, for an error
// ("a symlink"), not as a mode string with no permission bits.
func kind(m os.FileMode) string {
	switch {
	case m&os.ModeSymlink != 0:
		return "a symlink"
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	}
	return m.Type().String()
}

func tooLarge(what string, limit int64) error {
	return fmt.Errorf("%s: larger than %d MiB, the limit for this download", what, limit>>20)
}

// copyCapped copies at most limit bytes, failing past it, and stops when
// ctx ends (between reads: an http body's read itself ends with ctx).
func copyCapped(ctx context.Context, w io.Writer, r io.Reader, what string, limit int64) error {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		k, err := r.Read(buf)
		n += int64(k)
		if n > limit {
			return tooLarge(what, limit)
		}
		if _, werr := w.Write(buf[:k]); werr != nil {
			return werr
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return fmt.Errorf("%s: %w", what, cerr)
			}
			return err
		}
	}
}

// getIndex returns the index at src (a URL, a path or a file:// URL the
// user configured).
func (f Fetcher) getIndex(ctx context.Context, src string) ([]byte, error) {
	var b bytes.Buffer
	err := f.fetch(ctx, src, "", true, MaxIndexBytes, &b)
	return b.Bytes(), err
}

// download writes e's bundle to a new file in dir and returns its path
// and sha256, never holding it all in memory.
func (f Fetcher) download(ctx context.Context, e IndexEntry, dir string) (string, hash.Hash, error) {
	out := filepath.Join(dir, "bundle.tar.gz")
	fh, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", nil, err
	}
	h := sha256.New()
	err = f.fetch(ctx, e.URL, e.root, false, MaxBundleBytes, io.MultiWriter(fh, h))
	if cerr := fh.Close(); err == nil {
		err = cerr
	}
	return out, h, err
}

// indexRoot is the directory a local index's entries may read from; ""
// for an http(s) index.
func indexRoot(indexURL string) string {
	if u, err := url.Parse(indexURL); err == nil && isHTTP(u) {
		return ""
	}
	p, ok := localPath(indexURL)
	if !ok {
		return ""
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return ""
	}
	return filepath.Dir(abs)
}
