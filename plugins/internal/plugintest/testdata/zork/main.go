//go:build wasip1

// Command zork is a test progress plugin for a made-up framework's
// lines, "ZORK step N of T zloss=X", which the built-in progress
// plugin reads too (generic step N of T and a metric): the two answer
// the same lines.
package main

import (
	"strconv"
	"strings"

	"github.com/runbox/runbox/sdk"
)

func init() {
	sdk.Register(sdk.Plugin{
		Manifest: sdk.Manifest{Name: "zork", Version: "0.1.0", Prefilter: []string{"ZORK "}},
		Parse: func(in sdk.ParseInput) (sdk.ParseOutput, error) {
			var out sdk.ParseOutput
			for _, l := range in.Lines {
				f := strings.Fields(l)
				if len(f) < 6 || f[0] != "ZORK" || f[1] != "step" || f[3] != "of" {
					continue
				}
				step, _ := strconv.ParseInt(f[2], 10, 64)
				total, _ := strconv.ParseInt(f[4], 10, 64)
				u := sdk.Progress{Step: step, Total: total, Phase: "zorking", Source: "zork"}
				if v, ok := strings.CutPrefix(f[5], "zloss="); ok {
					x, _ := strconv.ParseFloat(v, 64)
					u.Metrics = map[string]float64{"zloss": x}
				}
				out.Updates = append(out.Updates, u)
			}
			return out, nil
		},
	})
}

func main() {}
