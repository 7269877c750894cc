//go:build !wasip1

package sdk_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// A plugin is a Go package main built with GOOS=wasip1 GOARCH=wasm
// -buildmode=c-shared (`runbox plugins new` writes the Makefile). It
// registers one sdk.Plugin from an init function: the manifest and one
// function per kind it implements. The SDK turns them into the module's
// exports; the host reads the manifest through runbox_describe.
//
// Built for the host (as here, and in a plugin's own unit tests),
// Register only records the plugin and Registered returns it, so the
// plugin's functions can be called natively.
func Example() {
	// In the plugin: func init() { sdk.Register(...) } and func main() {}.
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{
			Name:        "my-classifier",
			Version:     "0.1.0",
			Description: "explains failures of my framework",
			Priority:    10, // above the built-in classifier (0)
		},
		Classify: func(in sdk.ClassifyInput) (*sdk.Failure, error) { return nil, nil },
	})

	// What runbox_describe answers: ABI and kinds are filled in from the
	// functions that are set.
	m := sdk.Registered().Normalize()
	b, _ := json.Marshal(m)
	fmt.Println(string(b))
	// Output:
	// {"name":"my-classifier","version":"0.1.0","abi":1,"kinds":["classifier"],"description":"explains failures of my framework","priority":10}
}

// The guest decodes what the host sends as encoding/json would and
// answers what encoding/json would write (without linking it): the JSON
// in these examples is exactly what crosses the ABI.
func show(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Println("error:", err)
		return
	}
	fmt.Println(string(b))
}

// decode reads what the host sent, as the guest does before calling the
// plugin's function.
func decode(in string, v any) {
	if err := json.Unmarshal([]byte(in), v); err != nil {
		panic(err)
	}
}

// lines splits a tail into lines (a Failure's evidence quotes them).
func lines(tail string) []string { return strings.Split(strings.TrimRight(tail, "\n"), "\n") }
