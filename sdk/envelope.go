//go:build !wasip1

package sdk

import "encoding/json"

// Envelope is what every JSON-returning export of ABI v1 answers with
// (runbox_describe, runbox_plan, runbox_classify, runbox_parse): exactly one
// of Result or Error. An Error means the call failed; the host discards the
// instance and counts the failure against the plugin.
//
// The host decodes answers with it; it is not part of a wasip1 build, which
// writes envelopes without encoding/json (see guest_wasip1.go).
type Envelope struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}
