//go:build !wasip1

package sdk_test

import (
	"fmt"

	"github.com/runbox/runbox/sdk"
)

// A guest does not link encoding/json (it would make the module a third
// bigger and slower to load); DecodeJSONObject reads JSON found in output
// lines instead: the members in order, strings, numbers and bools as
// themselves, arrays and objects as encoding/json gives them.
func ExampleDecodeJSONObject() {
	line := `{"step": 5, "phase": "train", "metrics": {"loss": 0.25}, "done": false} trailing text`
	ok := sdk.DecodeJSONObject(line, func(key string, v sdk.JSONValue) {
		switch v.Kind {
		case sdk.JSONNumber:
			fmt.Println(key, "number", v.Num)
		case sdk.JSONString:
			fmt.Println(key, "string", v.Str)
		default:
			fmt.Println(key, v.Interface())
		}
	})
	fmt.Println(ok)
	// Output:
	// step number 5
	// phase string train
	// metrics map[loss:0.25]
	// done false
	// true
}
