package proc

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// IOBytes reads the bytes a process has made the kernel read from and
// write to storage (/proc/PID/io: read_bytes, write_bytes); ok is false
// when the file cannot be read (another user's process).
func IOBytes(pid int) (read, write uint64, ok bool) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/io")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, found := strings.Cut(sc.Text(), ":")
		if !found {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		if err != nil {
			continue
		}
		switch k {
		case "read_bytes":
			read = n
		case "write_bytes":
			write = n
		}
	}
	return read, write, true
}
