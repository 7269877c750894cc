//go:build !linux

package bundle

import "errors"

// exchange is Linux-only; place falls back to two renames.
func exchange(a, b string) error { return errors.ErrUnsupported }
