//go:build !linux

package jsonfile

import "errors"

// exchange is Linux's renameat2(RENAME_EXCHANGE); elsewhere Replace renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
