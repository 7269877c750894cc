package sdk

import "slices"

// Plugin is what a plugin author registers: a manifest and one function per
// kind the plugin implements. A nil function means the kind is not offered.
//
//	func init() {
//		sdk.Register(sdk.Plugin{
//			Manifest: sdk.Manifest{Name: "my-classifier", Version: "0.1.0"},
//			Classify: classify,
//		})
//	}
//	func main() {}
type Plugin struct {
	Manifest Manifest

	// Plan suggests how to run a command (kind planner).
	Plan func(PlanInput) (PlanOutput, error)
	// Classify explains a failed run (kind classifier). A nil Failure with a
	// nil error means "nothing to say"; the host asks the other classifiers.
	Classify func(ClassifyInput) (*Failure, error)
	// Parse turns a batch of output lines into progress updates (kind
	// progress). It must not keep state between calls: the host passes the
	// state so far in ParseInput.Last, and what the plugin returned as
	// ParseOutput.State with its previous batch in ParseInput.State.
	Parse func(ParseInput) (ParseOutput, error)
}

// Normalize returns the manifest the plugin describes itself with: ABI set
// to ABIVersion when zero, and Kinds inferred from the functions that are
// set when the author left it empty.
func (p Plugin) Normalize() Manifest {
	m := p.Manifest
	if m.ABI == 0 {
		m.ABI = ABIVersion
	}
	if len(m.Kinds) == 0 {
		if p.Plan != nil {
			m.Kinds = append(m.Kinds, KindPlanner)
		}
		if p.Classify != nil {
			m.Kinds = append(m.Kinds, KindClassifier)
		}
		if p.Parse != nil {
			m.Kinds = append(m.Kinds, KindProgress)
		}
	}
	return m
}

// Has reports whether the manifest lists kind k.
func (m Manifest) Has(k Kind) bool { return slices.Contains(m.Kinds, k) }
