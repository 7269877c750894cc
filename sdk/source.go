//go:build !wasip1

package sdk

import "embed"

// Source holds this package's Go files, so that tools (runbox plugins new)
// can vendor the SDK into a plugin project while the module is unpublished.
//
//go:embed *.go
var Source embed.FS
