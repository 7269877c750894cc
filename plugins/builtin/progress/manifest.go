package progress

import (
	"github.com/runbox/runbox/sdk"
)

// Version of the plugin; bump it when what Parse reports changes.
const Version = "0.1.3"

// Prefilter lists the literals the host looks for before sending a line:
// every format's literals (formats.go), derived, never kept here by hand.
// Every line any parser here accepts contains at least one of them
// (TestPrefilterCovers checks the fixtures, FuzzParse checks arbitrary
// input); ordinary log lines mostly contain none.
var Prefilter = derivedPrefilter()

// Patterns of the confirm entries below (RE2, matched around a literal).
const (
	// What kwNum reads after a keyword: "Step 45", "Step: [45/100]",
	// "Iteration 45", and plurals only before a fraction ("Steps 45/100",
	// "batches 3 of 10"); numbers after a plural are settings ("every 500
	// steps 3", "epochs: 10").
	kwSingular = `(?i:ation)?[ \t:=\[(#]*\d`
	kwPlural   = `(?i:s|es|ations)[ \t:=\[(#]*\d+(?:/| of )\d`
	// "45/100 steps": kwNum's count before the keyword.
	// A counter that leads the record (leadingCount: "40606/50000: ...",
	// after a list marker "2.  "): the keyword may be anywhere after it.
	kwLeadingCount = `^[_*]*(?:\d{1,3}\. +)?\d+/\d+(?:: | \([Ee]poch).*`
	kwCountBefore  = `\d/\d+ `
	// clean strips ANSI escapes before parsing, so a line with one may
	// have the number anywhere: any ESC before or after lets it through.
	escBefore = `\x1b.*`
	escAfter  = `.*\x1b`
)

// confirmKeyword confirms a literal that ends a keyword kwNum reads;
// first matches the keyword's bytes before the literal. kwNum wants the
// keyword at the start of a word.
func confirmKeyword(lit, first string) []sdk.PrefilterConfirm {
	word := `(?:^|[^A-Za-z0-9_])` + first
	return []sdk.PrefilterConfirm{
		{Literal: lit, Before: word, After: kwSingular},
		{Literal: lit, Before: word, After: kwPlural},
		{Literal: lit, Before: kwCountBefore + first},
		{Literal: lit, Before: kwLeadingCount},
		{Literal: lit, Before: escBefore},
		{Literal: lit, After: escAfter},
	}
}

// PrefilterConfirm narrows the literals that ordinary text is full of
// ("steps", "batch_size", "dispatch", "iterator", "SummaryWriter", "in
// progress") to the occurrences a parser here can read: every format's
// confirm patterns (formats.go), derived. Every line any parser accepts
// passes them (TestPrefilterCovers checks the fixtures,
// FuzzPrefilterConfirm arbitrary input), and a host that predates them
// just sends more lines.
var PrefilterConfirm = derivedConfirm()

// Manifest describes the plugin to the host.
var Manifest = sdk.Manifest{
	Name:        "runbox-progress",
	Version:     Version,
	ABI:         sdk.ABIVersion,
	Kinds:       []sdk.Kind{sdk.KindProgress},
	Description: "Default progress parser: ##PROGRESS##, tqdm, Lightning, Keras, Hugging Face, MLX-LM, XGBoost, LightGBM, fastai, detectron2, MMCV and generic step/epoch lines.",
	Frameworks: []string{
		"runbox", "tqdm", "pytorch-lightning", "keras", "tensorflow", "transformers",
		"mlx-lm", "xgboost", "lightgbm", "fastai", "detectron2", "mmcv", "mmengine", "pytorch",
	},
	Prefilter:        Prefilter,
	PrefilterConfirm: PrefilterConfirm,
}

// byFirst indexes Prefilter by first byte, and pairs marks the first two
// bytes of every literal, so that hasPrefilter looks at most positions
// with one table lookup.
var byFirst, pairs = func() (t [256][]string, bits [1 << 16 / 64]uint64) {
	for _, p := range Prefilter {
		t[p[0]] = append(t[p[0]], p)
		k := uint16(p[0])<<8 | uint16(p[1])
		bits[k>>6] |= 1 << (k & 63)
	}
	return t, bits
}()

// hasPrefilter reports whether s contains one of the Prefilter literals,
// in one pass over s. Parse applies it to every raw line first: a line the
// host would not send can never produce an update, and the common
// ordinary line is rejected without running any parser.
func hasPrefilter(s string) bool {
	for i := 0; i+1 < len(s); i++ {
		k := uint16(s[i])<<8 | uint16(s[i+1])
		if pairs[k>>6]&(1<<(k&63)) == 0 {
			continue
		}
		for _, p := range byFirst[s[i]] {
			if len(s)-i >= len(p) && s[i+1] == p[1] && s[i:i+len(p)] == p {
				return true
			}
		}
	}
	return false
}
