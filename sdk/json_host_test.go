//go:build !wasip1

package sdk

import (
	"bytes"
	"encoding/json"
	"testing"
)

// Envelope exists on the host only (the guest writes envelopes by hand).

func TestJSONEnvelope(t *testing.T) {
	for _, msg := range []string{"", "x", "panic: <nil> & \"q\"\n\tat \xff \u2028"} {
		want, _ := json.Marshal(Envelope{Error: msg})
		if got := appendErrorEnvelope(nil, msg); !bytes.Equal(got, want) {
			t.Errorf("error envelope %q: got %s, want %s", msg, got, want)
		}
	}
	f := &Failure{Code: CodeCUDAOOM, Message: "<oom> & more", Details: map[string]string{"a": "b"}, Confidence: 0.95}
	payload, err := appendFailure(nil, f)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(Envelope{Result: payload})
	if got := append(append([]byte(`{"result":`), payload...), '}'); !bytes.Equal(got, want) {
		t.Errorf("result envelope: got %s, want %s", got, want)
	}
	if want, _ := json.Marshal(Envelope{Result: json.RawMessage("null")}); string(want) != `{"result":null}` {
		t.Errorf("null result: %s", want)
	}
}
