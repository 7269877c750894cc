package jsonfile

import "golang.org/x/sys/unix"

// exchange swaps the files at a and b; an error (b missing, a filesystem
// that cannot) leaves both as they were.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
