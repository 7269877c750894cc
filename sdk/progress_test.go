package sdk

import (
	"reflect"
	"testing"
)

// Folding a batch's updates into one must leave the host's state exactly as
// merging them one by one would.
func TestCollapsedIsEquivalent(t *testing.T) {
	start := Progress{Step: 3, Total: 10, Phase: "train", Metrics: map[string]float64{"acc": 0.5}}
	out := ParseOutput{Updates: []Progress{
		{Step: 4, Metrics: map[string]float64{"loss": 1.5}},
		{Epoch: 2, EpochTotal: 5, Phase: "eval", Source: "keras"},
		{Step: 1, Total: 20, Percentage: 5, Metrics: map[string]float64{"loss": 1.2}, Message: "m"},
		{Rate: 3.5, RateUnit: "it/s", ETASeconds: 12},
	}}
	one, two := start, start
	one.Metrics, two.Metrics = map[string]float64{"acc": 0.5}, map[string]float64{"acc": 0.5}
	for _, u := range out.Updates {
		one.Merge(u)
	}
	c := out.Collapsed()
	if len(c.Updates) != 1 {
		t.Fatalf("%d updates after collapsing", len(c.Updates))
	}
	two.Merge(c.Updates[0])
	if !reflect.DeepEqual(one, two) {
		t.Errorf("sequential %+v\ncollapsed  %+v", one, two)
	}
	if got := (ParseOutput{}).Collapsed(); len(got.Updates) != 0 {
		t.Errorf("empty output collapsed to %+v", got)
	}
}
