package bundle

import "golang.org/x/sys/unix"

// exchange swaps the directories a and b in one step (renameat2
// RENAME_EXCHANGE), so that b's name never stops naming a whole bundle.
func exchange(a, b string) error {
	return unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE)
}
