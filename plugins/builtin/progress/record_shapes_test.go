package progress

import "github.com/runbox/runbox/sdk"

// recordShapes: record shapes with no keyword the generic reader knows
// (value before name, a value glued to the next key, a count of trees),
// and the lines around them that must stay nothing. They join edgeCases,
// so TestEdgeCases, TestPrefilterCovers and the fuzzers see them.
var recordShapes = []struct {
	name  string
	lines []string
	want  *sdk.Progress
}{
	{"value first, name after, the first bare value the loss", []string{
		"12: 3.250000, 3.500000 avg, 0.001000 rate, 1.250000 seconds, 768 images"},
		&sdk.Progress{Step: 12, Phase: "train", Source: "generic", Metrics: m{"loss": 3.25, "avg_loss": 3.5, "rate": 0.001}}},
	{"value first with a loss keyword and hours left", []string{
		" 900: 1.500000, 1.750000 avg loss, 0.002000 rate, 3.5 seconds, 57600 images, 12.5 hours left"},
		&sdk.Progress{Step: 900, Phase: "train", Source: "generic", Metrics: m{"loss": 1.5, "avg_loss": 1.75, "rate": 0.002}}},
	{"prose with commas after a counter is not value-first", []string{
		"3: 12 apples, 4 pears, and more"}, nil},
	{"a value glued to the next key", []string{
		"7:\tlearn 0.4200000000passed: 3.2 sec\ttotal: 22s\tremaining: 1m 3s"},
		&sdk.Progress{Step: 7, Phase: "train", Source: "generic", Metrics: m{"learn": 0.42}}},
	{"trees built of a total beside a score", []string{
		"built tree 4 of 250, train score = 7.5e-01"},
		&sdk.Progress{Step: 4, Total: 250, Percentage: 1.6, Phase: "train", Source: "generic", Metrics: m{"train score": 0.75}}},
	{"a tree count with no metric is nothing", []string{
		"Pruning tree 4 of 250"}, nil},
}

func init() {
	edgeCases = append(edgeCases, recordShapes...)
}
