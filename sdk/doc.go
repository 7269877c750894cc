// Package sdk is what runbox plugin authors import.
//
// It holds the one definition of the wire types that cross the plugin ABI
// (the host decodes exactly what the guest encodes), the failure codes, and —
// when built for GOOS=wasip1 — the guest helpers that turn ordinary Go
// functions into the exports of ABI v1 (see docs/PLUGINS.md).
package sdk
