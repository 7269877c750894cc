package sdk

import "encoding/json"

// Envelope is what every JSON-returning export of ABI v1 answers with
// (runbox_describe, runbox_plan, runbox_classify, runbox_parse): exactly one
// of Result or Error. An Error means the call failed; the host discards the
// instance and counts the failure against the plugin.
type Envelope struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  string          `json:"error,omitempty"`
}
