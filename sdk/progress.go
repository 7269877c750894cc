package sdk

// Merge folds an update into p: every field the update knows replaces the
// current one; metrics are merged key by key. A step counter that restarts
// (new epoch, new phase) is taken as it comes: the update is the newer truth.
func (p *Progress) Merge(u Progress) {
	if u.Step != 0 {
		p.Step = u.Step
	}
	if u.Total != 0 {
		p.Total = u.Total
	}
	if u.Percentage != 0 {
		p.Percentage = u.Percentage
	}
	if u.Phase != "" {
		p.Phase = u.Phase
	}
	if u.Epoch != 0 {
		p.Epoch = u.Epoch
	}
	if u.EpochTotal != 0 {
		p.EpochTotal = u.EpochTotal
	}
	if u.Epoch != 0 {
		// A whole epoch printed later replaces a fractional one.
		p.EpochExact = u.EpochExact
	}
	if u.ETASeconds != 0 {
		p.ETASeconds = u.ETASeconds
	}
	if u.Rate != 0 {
		p.Rate = u.Rate
	}
	if u.RateUnit != "" {
		p.RateUnit = u.RateUnit
	}
	if u.Message != "" {
		p.Message = u.Message
	}
	if u.Source != "" {
		p.Source = u.Source
	}
	if len(u.Metrics) > 0 {
		if p.Metrics == nil {
			p.Metrics = make(map[string]float64, len(u.Metrics))
		}
		for k, v := range u.Metrics {
			p.Metrics[k] = v
		}
	}
}

// Collapsed returns o with its updates folded into one, in order. The host
// only ever merges updates into the run's state one after the other, so the
// result is the same state — and a batch with many progress lines crosses
// the ABI as one update instead of hundreds.
func (o ParseOutput) Collapsed() ParseOutput {
	if len(o.Updates) <= 1 {
		return o
	}
	var m Progress
	for _, u := range o.Updates {
		m.Merge(u)
	}
	return ParseOutput{Updates: []Progress{m}}
}
