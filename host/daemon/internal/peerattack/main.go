// Command peerattack tries to use the runbox daemon's socket the ways a
// hostile run would; the tests of the daemon's peer checks run it inside
// confined runs and containers (it is built static, so it runs in an
// image with nothing else in it). It prints one JSON line (Result).
//
//	peerattack race SOCKET TRIES BODY   the race of issue 22: a child connects and
//	                                    exits, the parent writes on its connection
//	peerattack direct SOCKET BODY       connect and write, one process
//
// BODY is the JSON of a POST /v1/runs.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Result is what an attack got.
type Result struct {
	Tries int `json:"tries"`
	// Reached counts connections the daemon's socket took.
	Reached int `json:"reached"`
	// RefusedAtConnect: a 403 came before anything was written;
	// RefusedAtWrite: the request was answered 403.
	RefusedAtConnect int    `json:"refused_at_connect"`
	RefusedAtWrite   int    `json:"refused_at_write"`
	Accepted         bool   `json:"accepted"`
	Status           string `json:"status,omitempty"` // the last status line
	Err              string `json:"err,omitempty"`    // the last error
}

func main() {
	if len(os.Args) >= 3 && os.Args[1] == "connect" {
		// The race's child: connect the inherited socket, and exit.
		if err := unix.Connect(3, &unix.SockaddrUnix{Name: os.Args[2]}); err != nil {
			fmt.Fprintln(os.Stderr, "connect:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	var r Result
	switch {
	case len(os.Args) == 5 && os.Args[1] == "race":
		tries, _ := strconv.Atoi(os.Args[3])
		race(&r, os.Args[2], tries, []byte(os.Args[4]))
	case len(os.Args) == 4 && os.Args[1] == "direct":
		direct(&r, os.Args[2], []byte(os.Args[3]))
	default:
		fmt.Fprintln(os.Stderr, "usage: peerattack race SOCKET TRIES BODY | direct SOCKET BODY")
		os.Exit(2)
	}
	b, _ := json.Marshal(r)
	fmt.Println(string(b))
}

func race(r *Result, socket string, tries int, body []byte) {
	self, err := os.Executable()
	if err != nil {
		r.Err = err.Error()
		return
	}
	for r.Tries < tries && !r.Accepted {
		r.Tries++
		fd, err := unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
		if err != nil {
			r.Err = err.Error()
			return
		}
		f := os.NewFile(uintptr(fd), "socket")
		child := exec.Command(self, "connect", socket)
		child.ExtraFiles = []*os.File{f}
		child.Stderr = os.Stderr
		err = child.Run()
		c, ferr := net.FileConn(f)
		f.Close()
		if err != nil || ferr != nil {
			r.Err = fmt.Sprintf("child: %v %v", err, ferr)
			if c != nil {
				c.Close()
			}
			continue
		}
		r.Reached++
		ask(r, c, body, 200*time.Millisecond)
	}
}

func direct(r *Result, socket string, body []byte) {
	r.Tries = 1
	c, err := net.Dial("unix", socket)
	if err != nil {
		r.Err = err.Error()
		return
	}
	r.Reached++
	ask(r, c, body, 0)
}

// ask waits up to wait for a refusal before writing (as the issue's
// reproducer does), then posts body and reads the status line.
func ask(r *Result, c net.Conn, body []byte, wait time.Duration) {
	defer c.Close()
	br := bufio.NewReader(c)
	if wait > 0 {
		c.SetReadDeadline(time.Now().Add(wait))
		if line, err := br.ReadString('\n'); err == nil || line != "" {
			r.Status = strings.TrimSpace(line)
			r.RefusedAtConnect++
			return
		}
	}
	c.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(c, "POST /v1/runs HTTP/1.1\r\nHost: runbox\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	line, err := br.ReadString('\n')
	r.Status = strings.TrimSpace(line)
	switch {
	case err != nil && line == "":
		r.Err = err.Error()
	case strings.HasPrefix(r.Status, "HTTP/1.1 2"):
		r.Accepted = true
	case strings.HasPrefix(r.Status, "HTTP/1.1 403"):
		r.RefusedAtWrite++
	}
}
