//go:build wasip1

package main

import (
	"encoding/json"
	"strings"

	"github.com/runbox/runbox/plugins/builtin/progress"
	"github.com/runbox/runbox/sdk"
)

var sink []byte
var mix = progress.SyntheticMix(2000)
var nomatch, match, steps, prog []string
var inJSON []byte
var outV sdk.ParseOutput

func init() {
	for _, l := range mix {
		ok := false
		for _, lit := range progress.Prefilter {
			if strings.Contains(l, lit) {
				ok = true
			}
		}
		if !ok {
			nomatch = append(nomatch, l)
		} else {
			match = append(match, l)
			if strings.Contains(l, "checkpoint every") {
				steps = append(steps, l)
			} else {
				prog = append(prog, l)
			}
		}
	}
	inJSON, _ = json.Marshal(sdk.ParseInput{Lines: match, Last: &sdk.Progress{Step: 1, Total: 3, Metrics: map[string]float64{"loss": 1}}})
	outV = progress.Parse(sdk.ParseInput{Lines: match})
}

func loop(n int32, ls []string) int32 {
	for i := int32(0); i < n; i++ {
		progress.Parse(sdk.ParseInput{Lines: ls})
	}
	return int32(len(ls))
}

//go:wasmexport zz_nomatch
func zzNomatch(n int32) int32 { return loop(n, nomatch) }

//go:wasmexport zz_steps
func zzSteps(n int32) int32 { return loop(n, steps) }

//go:wasmexport zz_prog
func zzProg(n int32) int32 { return loop(n, prog) }

//go:wasmexport zz_dec
func zzDec(n int32) int32 {
	for i := int32(0); i < n; i++ {
		var pi sdk.ParseInput
		json.Unmarshal(inJSON, &pi)
	}
	return int32(len(inJSON))
}

//go:wasmexport zz_enc
func zzEnc(n int32) int32 {
	for i := int32(0); i < n; i++ {
		sink, _ = json.Marshal(outV)
	}
	return int32(len(outV.Updates))
}

func main() {}
