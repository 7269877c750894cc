package progress

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// decodeMembers must read what json.Decoder.Decode into a map[string]any
// reads (see parseRunbox), keeping the order of the members.
func checkDecodeObject(t *testing.T, s string) {
	t.Helper()
	if t := strings.TrimLeft(s, " \t\r\n"); t == "" || t[0] != '{' {
		return // parseRunbox only decodes objects
	}
	var want map[string]any
	werr := json.NewDecoder(strings.NewReader(s)).Decode(&want)
	ms, ok := decodeMembers(s)
	var got map[string]any
	if ok {
		got = map[string]any{}
		for _, m := range ms {
			got[m.key] = m.val
		}
	}
	if ok != (werr == nil) || ok && !reflect.DeepEqual(got, want) {
		t.Errorf("decodeMembers(%q)\n got %#v, %v\nwant %#v, %v", s, got, ok, want, werr)
	}
}

var objectCases = []string{
	`{}`, `{} trailing`, `{}}`, ` {"a":1}`, `{"step":1,"total":2}`, `{"a":1,"a":"x"}`, `{"metrics":{"loss":0.5,"acc":"0.9"}}`,
	`{"a":[1,"b",null,true,false,{"c":[]}],"d":{}}`, `{"a":1e400}`, `{"a":[1e400]}`, `{"a":-0}`, `{"a":1E-2}`, `{"a":01}`,
	`{"a":1.}`, `{"a":.5}`, `{"a":-}`, `{"a":+1}`, `{"a":tru}`, `{"a":nul}`, `{"a":}`, `{"a" 1}`, `{a:1}`, `{"a":1,}`,
	`{"a":[1,]}`, `{"a":[,]}`, `{"a":1`, `{"a":"b`, `{"a":"\u00e9\ud83d\ude00\ud800\udc00x\ud800"}`, `{"a":"\'"}`,
	`{"a":"\u12"}`, `{"a":"\u\u0041"}`, `{"a":"\x"}`, `{"a":"` + "\x01" + `"}`, `{"a":"` + "\xff\xed\xa0\x80é" + `"}`,
	`{"\u0073tep":3}`, `{"a":"\"\\\/\b\f\n\r\t"}`, `{"phase":"train","step":5,"total":10,"x":{"y":[1,2,{"z":null}]}} tail`,
	`{"a":1}{"b":2}`, "{\"a\":1}\x00", `{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
	`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	`{"a":` + strings.Repeat(`{"b":`, 9998) + `1` + strings.Repeat("}", 9998) + `}`,
	`{"a":` + strings.Repeat(`{"b":`, 9999) + `1` + strings.Repeat("}", 9999) + `}`,
}

func TestDecodeMembersMatchesEncodingJSON(t *testing.T) {
	for _, s := range objectCases {
		checkDecodeObject(t, s)
	}
}

func FuzzDecodeMembers(f *testing.F) {
	for _, s := range objectCases {
		if len(s) < 1000 {
			f.Add(s)
		}
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkDecodeObject(t, s)
		checkDecodeObject(t, "{"+s)
		checkDecodeObject(t, `{"a":`+s+`}`)
	})
}

// TestRunboxAliasesInOrder: whichever path reads a contract object (the
// flat scanner, or the general decoder for nested values and escapes),
// aliases resolve the same way: a repeated key counts at its last place,
// the last alias wins.
func TestRunboxAliasesInOrder(t *testing.T) {
	for _, flat := range []string{
		`{"step":1,"current":2,"n":3}`, `{"n":3,"step":1,"current":2}`, `{"step":1,"current":2,"step":5}`,
		`{"eta":1,"eta_seconds":2}`, `{"percent":10,"pct":20,"progress":30}`, `{"loss":1,"metrics":{"loss":2}}`,
		`{"metrics":{"loss":2},"loss":1}`, `{"epochs":4,"total_epochs":5,"epoch":1,"phase":"a","stage":"b"}`,
	} {
		want, ok := parseRunbox("##PROGRESS## " + flat)
		if !ok {
			t.Fatalf("%s: not parsed", flat)
		}
		for _, s := range []string{
			flat[:len(flat)-1] + `,"x":{"y":[1]}}`, `{"x":[],` + flat[1:], flat[:len(flat)-1] + `,"z":"\u0041"}`,
			flat[:len(flat)-1] + `,"big":1e5}`, flat[:len(flat)-1] + `,"é":"à"}`,
		} {
			for range 20 { // map order would show within a few tries
				got, ok := parseRunbox("##PROGRESS## " + s)
				if !ok || !reflect.DeepEqual(got.Metrics["x"], want.Metrics["x"]) || got.Step != want.Step ||
					got.ETASeconds != want.ETASeconds || got.Percentage != want.Percentage || got.EpochTotal != want.EpochTotal ||
					got.Phase != want.Phase || got.Metrics["loss"] != want.Metrics["loss"] {
					t.Fatalf("%s: got %+v, want (as %s) %+v", s, got, flat, want)
				}
			}
		}
	}
}

func TestMixFormatIsSprintf(t *testing.T) {
	for _, p := range mixProgress {
		for _, n := range []int{0, 7, 999} {
			if got, want := mixFormat(p, n, 1000), fmt.Sprintf(p, n, 1000); got != want {
				t.Errorf("mixFormat(%q) = %q, want %q", p, got, want)
			}
		}
	}
}
