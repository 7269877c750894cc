package egress

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
)

// benchSize is what one download moves: 1 GiB, as BENCHMARKS.md reports.
const benchSize = 1 << 30

// zeroServer serves benchSize bytes to every connection after any input
// line, like a download.
func zeroServer(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { l.Close() })
	buf := make([]byte, 256<<10)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = bufio.NewReader(c).ReadString('\n')
				for left := benchSize; left > 0; left -= len(buf) {
					if _, err := c.Write(buf[:min(left, len(buf))]); err != nil {
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// BenchmarkDownload1GiB: 1 GiB from a loopback server, directly and
// through the proxy's CONNECT tunnel.
func BenchmarkDownload1GiB(b *testing.B) {
	srv := zeroServer(b)
	_, sp, _ := net.SplitHostPort(srv)
	allow, _ := Parse([]string{"allowed.test:" + sp})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	p := &Proxy{Allow: allow, Hosts: map[string]string{"allowed.test": "127.0.0.1"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go p.Serve(ctx, l)
	download := func(b *testing.B, proxied bool) {
		b.SetBytes(benchSize)
		for b.Loop() {
			addr := srv
			if proxied {
				addr = l.Addr().String()
			}
			c, err := net.Dial("tcp", addr)
			if err != nil {
				b.Fatal(err)
			}
			br := bufio.NewReaderSize(c, 64<<10)
			if proxied {
				fmt.Fprintf(c, "CONNECT allowed.test:%s HTTP/1.1\r\nHost: allowed.test:%s\r\n\r\n", sp, sp)
				resp, err := http.ReadResponse(br, nil)
				if err != nil || resp.StatusCode != 200 {
					b.Fatalf("CONNECT: %v %v", resp, err)
				}
			}
			io.WriteString(c, "GET\n")
			n, err := io.Copy(io.Discard, br)
			c.Close()
			if err != nil || n != benchSize {
				b.Fatalf("read %d: %v", n, err)
			}
		}
	}
	b.Run("direct", func(b *testing.B) { download(b, false) })
	b.Run("proxied", func(b *testing.B) { download(b, true) })
}
