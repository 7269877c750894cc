// Command gengates writes the classifier's gates_gen.go from its matchers'
// source (run it in plugins/builtin/classify: `go run ./internal/gengates`).
package main

import (
	"fmt"
	"os"

	"github.com/runbox/runbox/plugins/builtin/classify/internal/phrases"
)

func main() {
	d, err := phrases.Derive(".")
	if err == nil {
		var src []byte
		if src, err = phrases.Source("classify", d); err == nil {
			err = os.WriteFile("gates_gen.go", src, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "gengates:", err)
		os.Exit(1)
	}
}
