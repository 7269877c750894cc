package progress

import (
	"sync"

	"github.com/runbox/runbox/sdk"
)

// scratch holds a batch's mlog and marks, reused from batch to batch: in a
// guest, allocating them anew for each batch (and the collections that
// brings on) cost more than parsing the lines.
type scratch struct {
	marks []keptMark
	mlog  []metric
}

var scratches = sync.Pool{New: func() any { return new(scratch) }}

func (st *state) borrow() {
	st.sc = scratches.Get().(*scratch)
	st.marks, st.mlog = st.sc.marks[:0], st.sc.mlog[:0]
}

// release gives mlog and marks back, emptied so that they keep no line of
// the batch alive.
func (st *state) release() {
	clear(st.marks)
	clear(st.mlog)
	st.sc.marks, st.sc.mlog = st.marks[:0], st.mlog[:0]
	scratches.Put(st.sc)
	st.sc, st.marks, st.mlog = nil, nil, nil
}

// keptMark is the batch's progress folded up to an update a history keeps:
// acc without metrics, and how much of st.mlog was written then.
type keptMark struct {
	acc  sdk.Progress
	mlog int
}

// kept returns the updates the batch answers (see Parse): a mark's acc,
// with the metrics set since the mark before it, for each of at most
// sdk.MaxUpdates marks evenly chosen, the batch's end (last) always one.
// The host merging them in order gets the state it had at each mark, and
// at the end the same state as merging the batch's every update.
func (st *state) kept(last *sdk.Progress) []sdk.Progress {
	marks := st.marks
	if len(marks) == 0 || st.tail {
		marks = append(marks, keptMark{*last, len(st.mlog)})
		st.marks = marks // release clears it
	}
	if k := len(marks); k > sdk.MaxUpdates {
		for j := range sdk.MaxUpdates {
			marks[j] = marks[(j+1)*k/sdk.MaxUpdates-1]
		}
		marks = marks[:sdk.MaxUpdates]
	}
	out := make([]sdk.Progress, len(marks))
	from := 0
	var fold metricFold
	for i := range marks {
		out[i] = marks[i].acc
		if i > 0 {
			unchanged(&out[i], &marks[i-1].acc)
		}
		if seg := st.mlog[from:marks[i].mlog]; len(seg) > 0 {
			fold = metricFold{}
			for _, m := range seg {
				fold.set(m.k, m.v)
			}
			out[i].Metrics = fold.build()
		}
		from = marks[i].mlog
	}
	return out
}

// unchanged clears in u the fields that are as in prev, the update merged
// just before it: merging u then changes the same, and the answer, which a
// guest encodes number by number, is about half as long.
func unchanged(u, prev *sdk.Progress) {
	if u.Epoch == prev.Epoch && u.EpochExact == prev.EpochExact {
		u.Epoch, u.EpochExact = 0, 0 // Merge takes EpochExact with Epoch
	}
	if u.Step == prev.Step {
		u.Step = 0
	}
	if u.Total == prev.Total {
		u.Total = 0
	}
	if u.Percentage == prev.Percentage {
		u.Percentage = 0
	}
	if u.EpochTotal == prev.EpochTotal {
		u.EpochTotal = 0
	}
	if u.ETASeconds == prev.ETASeconds {
		u.ETASeconds = 0
	}
	if u.Rate == prev.Rate {
		u.Rate = 0
	}
	if u.Phase == prev.Phase {
		u.Phase = ""
	}
	if u.RateUnit == prev.RateUnit {
		u.RateUnit = ""
	}
	if u.Message == prev.Message {
		u.Message = ""
	}
	if u.Source == prev.Source {
		u.Source = ""
	}
}
