package daemon

import (
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/runbox/runbox/api"
)

// An answer the daemon cannot encode (a NaN that slipped into it) is a
// 500 that says so, never a 200 with an empty or half-written body: the
// CLI printed "decode daemon answer: EOF" for a compare of a run whose
// loss went NaN.
func TestWriteJSONThatCannotEncode(t *testing.T) {
	rec := httptest.NewRecorder()
	writeJSON(rec, http.StatusOK, map[string]float64{"loss": math.NaN()})
	var e api.Error
	if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || rec.Code != http.StatusInternalServerError ||
		e.Code != api.CodeInternal || !strings.Contains(e.Error, "could not encode its answer") {
		t.Fatalf("status %d, body %q (%v)", rec.Code, rec.Body, err)
	}
	rec = httptest.NewRecorder()
	writeJSON(rec, http.StatusCreated, map[string]float64{"loss": 0.5})
	if rec.Code != http.StatusCreated || strings.TrimSpace(rec.Body.String()) != `{"loss":0.5}` {
		t.Fatalf("status %d, body %q", rec.Code, rec.Body)
	}
}
