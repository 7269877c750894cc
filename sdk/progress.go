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

// Collapsed returns o with its updates folded into one, in order: the same
// state once the host has merged them, but a metric history then keeps one
// point for the whole batch. The guest answers with Thinned instead.
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

// MaxUpdates is the most updates the SDK sends for one batch (Thinned).
const MaxUpdates = 64

// Thinned returns o with the updates a metric history wants kept apart:
// each one that carries metrics, a new step or a new percentage ends a
// kept update, into which the updates since the one kept before are
// folded (Merge, in order), so the host's state after each kept update is
// the state it would have had then, and after the last the same as merging
// them all. Past MaxUpdates the kept ones are thinned evenly, the last
// always kept: a batch's answer stays bounded however many lines it holds.
func (o ParseOutput) Thinned() ParseOutput {
	us := o.Updates
	if len(us) <= 1 {
		return o
	}
	ends := make([]int, 0, min(len(us), 2*MaxUpdates))
	var step int64
	var pct float64
	for i := range us {
		u := &us[i]
		if len(u.Metrics) > 0 || u.Step != 0 && u.Step != step || u.Percentage != 0 && u.Percentage != pct {
			ends = append(ends, i)
		}
		if u.Step != 0 {
			step = u.Step
		}
		if u.Percentage != 0 {
			pct = u.Percentage
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] != len(us)-1 {
		ends = append(ends, len(us)-1)
	}
	if len(ends) == len(us) && len(us) <= MaxUpdates {
		return o
	}
	if k := len(ends); k > MaxUpdates {
		for j := range MaxUpdates {
			ends[j] = ends[(j+1)*k/MaxUpdates-1]
		}
		ends = ends[:MaxUpdates]
	}
	out := make([]Progress, 0, len(ends))
	from := 0
	for _, e := range ends {
		if e == from {
			out = append(out, us[e])
		} else {
			var m Progress
			for _, u := range us[from : e+1] {
				m.Merge(u)
			}
			out = append(out, m)
		}
		from = e + 1
	}
	return ParseOutput{Updates: out, State: o.State}
}
