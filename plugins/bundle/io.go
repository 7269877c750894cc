package bundle

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// maxBundleFile bounds one file read from a bundle (a Go plugin is ~3 MiB).
const maxBundleFile = 64 << 20

func isTarball(p string) bool {
	return strings.HasSuffix(p, ".tar.gz") || strings.HasSuffix(p, ".tgz")
}

// readFiles reads a bundle's regular files into memory, keyed by
// slash-separated relative path.
func readFiles(p string) (map[string][]byte, error) {
	if isTarball(p) {
		// A folder named like a tarball is still a folder bundle.
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			files, err := readTarGz(p)
			if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, tar.ErrHeader) {
				err = fmt.Errorf("%s is truncated or corrupt (download it again, or pack it again with runbox plugins pack): %w", p, err)
			}
			return files, err
		}
	}
	files := map[string][]byte{}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			// A directory holds nothing a bundle lists (Pack writes none):
			// most likely a plugin project (its testdata), not its bundle.
			return nil, fmt.Errorf("%s holds a directory, %s, and a bundle holds only files: if it is a plugin project, make its bundle first (make bundle, or runbox plugins pack %s OUT.tar.gz) and install that", p, e.Name(), p)
		}
		if !e.Type().IsRegular() {
			// A link could point out of the bundle.
			return nil, fmt.Errorf("%s is not a regular file (%s): bundles hold only files", e.Name(), kind(e.Type()))
		}
		b, err := readLimited(filepath.Join(p, e.Name()))
		if err != nil {
			return nil, err
		}
		files[e.Name()] = b
	}
	return files, nil
}

func readLimited(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBundleFile+1))
	if err == nil && len(b) > maxBundleFile {
		err = fmt.Errorf("%s larger than %d bytes", p, maxBundleFile)
	}
	return b, err
}

func readTarGz(p string) (map[string][]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	tr := tar.NewReader(zr)
	files := map[string][]byte{}
	for {
		hdr, err := tr.Next()
		if err == io.EOF {
			return files, nil
		}
		if err != nil {
			return nil, fmt.Errorf("untar: %w", err)
		}
		name := path.Clean(strings.TrimPrefix(hdr.Name, "./"))
		if !filepath.IsLocal(name) {
			return nil, fmt.Errorf("untar: entry %q escapes the bundle", hdr.Name)
		}
		switch hdr.Typeflag {
		case tar.TypeReg:
		case tar.TypeDir:
			continue
		default: // links above all: one could point out of the bundle
			return nil, fmt.Errorf("untar: entry %q is not a regular file (type %q): bundles hold only files", hdr.Name, hdr.Typeflag)
		}
		if hdr.Size > maxBundleFile {
			return nil, fmt.Errorf("untar: %s larger than %d bytes", name, maxBundleFile)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			return nil, fmt.Errorf("untar %s: %w", name, err)
		}
		files[name] = b
	}
}

// writeTarGz writes files deterministically (sorted, no times or owners).
func writeTarGz(out string, files map[string][]byte) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		hdr := &tar.Header{Name: n, Mode: 0o644, Size: int64(len(files[n])), Typeflag: tar.TypeReg, Format: tar.FormatPAX}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		if _, err := tw.Write(files[n]); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return os.WriteFile(out, buf.Bytes(), 0o644)
}

func writeDir(dir string, files map[string][]byte) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for n, b := range files {
		p := filepath.Join(dir, filepath.FromSlash(n))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}
