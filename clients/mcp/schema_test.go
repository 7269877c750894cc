package mcp

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestInputSchemasHaveNoNullableUnions: every tool's input schema gives
// each argument one plain type (command's string-or-array and memory's
// string-or-integer aside, which no client turns into a string by
// mistake): a client that fills a form from the schema sends a number as
// a number. The wait's default is under common client timeouts.
func TestInputSchemasHaveNoNullableUnions(t *testing.T) {
	for name, sc := range map[string]*jsonschema.Schema{
		"compute_plan": planSchema(), "local_execute": executeSchema(), "local_status": runSchema(),
		"local_wait": waitSchema(), "local_logs": logsSchema(), "local_stop": runSchema(),
	} {
		b, err := json.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), `"null"`) {
			t.Errorf("%s: a nullable type in its input schema: %s", name, b)
		}
	}
	w := waitSchema().Properties["timeout_seconds"]
	if w.Type != "number" || string(w.Default) != "45" || !strings.Contains(w.Description, "default 45") {
		t.Errorf("timeout_seconds: type %q default %s: %q", w.Type, w.Default, w.Description)
	}
	if defaultWait.Seconds() > 45 {
		t.Errorf("local_wait's default is %v: over 45 s, where clients give up", defaultWait)
	}
	if tl := logsSchema().Properties["tail_lines"]; tl.Type != "integer" {
		t.Errorf("tail_lines: %q %v", tl.Type, tl.Types)
	}
	if bd := planSchema().Properties["backend_data"]; bd.Type != "object" || bd.Properties["recommendations"].Type != "object" {
		t.Errorf("backend_data: %q %v", bd.Type, bd.Types)
	}
}
