package store

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"

	"github.com/cockroachdb/pebble/v2"
	"github.com/runbox/runbox/sdk"
)

// DefaultExperienceRuns is how many runs Experience looks at when asked for 0.
const DefaultExperienceRuns = 20

// fpKey is the index form of a fingerprint: itself when short and free of
// NUL bytes, else a hash of it.
func fpKey(fp string) string {
	if len(fp) <= 128 && !strings.ContainsRune(fp, 0) {
		return fp
	}
	sum := sha256.Sum256([]byte(fp))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Experience summarises the latest limit terminal runs with this
// fingerprint (DefaultExperienceRuns when limit <= 0). Failed counts runs
// that failed or timed out; cancelled and lost runs count only in Runs.
// The median duration is that of the succeeded runs, or of all of them when
// none succeeded. LastFailure is the newest run's failure.
func (s *Store) Experience(ctx context.Context, fingerprint string, limit int) (sdk.Experience, error) {
	if limit <= 0 {
		limit = DefaultExperienceRuns
	}
	var exp sdk.Experience
	if fingerprint == "" {
		return exp, nil
	}
	err := s.reader(ctx, func(db *pebble.DB) error {
		runs, err := terminalRuns(ctx, db, fingerprint, limit)
		if err != nil {
			return err
		}
		exp = summarise(runs)
		return nil
	})
	return exp, err
}

// terminalRuns walks the fingerprint index newest first and keeps the
// first limit runs that have ended.
func terminalRuns(ctx context.Context, db *pebble.DB, fp string, limit int) ([]*Run, error) {
	snap := db.NewSnapshot()
	defer snap.Close()
	pfx := indexPrefix(idxFP, fpKey(fp))
	it, err := snap.NewIter(&pebble.IterOptions{LowerBound: pfx, UpperBound: prefixEnd(pfx)})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var runs []*Run
	for ok := it.Last(); ok && len(runs) < limit; ok = it.Prev() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		id := idFromIndexKey(pfx, it.Key())
		v, err := get(snap, runKey(id))
		if err != nil {
			return nil, err
		}
		if v == nil {
			continue
		}
		r, err := decode[Run]("run", id, v)
		if err != nil {
			return nil, err
		}
		if r.State.Terminal() && r.Fingerprint == fp {
			runs = append(runs, r)
		}
	}
	return runs, it.Error()
}

// summarise builds the experience of runs, given newest first.
func summarise(runs []*Run) sdk.Experience {
	var exp sdk.Experience
	var ok, all []float64
	var told, atLeast uint64
	for _, r := range runs {
		exp.Runs++
		switch r.State {
		case Succeeded:
			exp.Succeeded++
		case Failed, TimedOut:
			exp.Failed++
		}
		if r.Failure != nil && r.State != Succeeded {
			if exp.FailureCodes == nil {
				exp.FailureCodes = map[string]int{}
			}
			exp.FailureCodes[r.Failure.Code]++
			if exp.LastFailure == nil {
				f := *r.Failure
				exp.LastFailure = &f
			}
		}
		if d, known := duration(r); known {
			all = append(all, d)
			if r.State == Succeeded {
				ok = append(ok, d)
			}
		}
		if r.Exit != nil {
			switch peakOf(r) {
			case peakTells:
				told = max(told, r.Exit.Usage.PeakRSSBytes)
			case peakAtLeast:
				atLeast = max(atLeast, r.Exit.Usage.PeakRSSBytes)
			}
		}
	}
	if told > 0 {
		exp.MaxPeakRSSBytes = max(told, atLeast)
	}
	if len(ok) == 0 {
		ok = all
	}
	exp.MedianDurationSeconds = median(ok)
	return exp
}

// What a run's peak RSS says of how much memory its command needs, so that
// a plan may size the next run's limit from it (sdk.Experience.MaxPeakRSSBytes).
const (
	// peakSilent: a failed smoke run's peak is the smoke command's.
	peakSilent = iota
	// peakTells the need: the run succeeded, or memory or time stopped it
	// (the need was at least that much).
	peakTells
	// peakAtLeast: the run failed some other way, was cancelled or lost. Its
	// peak may raise a told one, never stand alone: such a run may have
	// stopped long before its peak (a missing file at its start), and a
	// limit sized from that gets the fixed run OOM-killed.
	peakAtLeast
)

func peakOf(r *Run) int {
	switch {
	case r.State == Succeeded || r.State == TimedOut:
		return peakTells
	case r.Failure != nil && r.Failure.Code == sdk.CodeOOMKilled:
		return peakTells
	case r.Failure != nil && r.Failure.Code == sdk.CodeSmokeFailed:
		return peakSilent
	}
	return peakAtLeast
}

// duration is the run's wall time: the exit record's when there is one,
// else the span between StartedAt and EndedAt.
func duration(r *Run) (float64, bool) {
	if r.Exit != nil && r.Exit.Usage.WallSeconds > 0 {
		return r.Exit.Usage.WallSeconds, true
	}
	if r.StartedAt != nil && r.EndedAt != nil && !r.EndedAt.Before(*r.StartedAt) {
		return r.EndedAt.Sub(*r.StartedAt).Seconds(), true
	}
	return 0, false
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	xs = slices.Clone(xs)
	slices.Sort(xs)
	n := len(xs)
	if n%2 == 1 {
		return xs[n/2]
	}
	return (xs[n/2-1] + xs[n/2]) / 2
}
