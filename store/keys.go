package store

import (
	"encoding/binary"
	"time"
)

// Key layout. Every key starts with a one-letter table and a slash; the
// parts of index keys are separated by a NUL byte, which no id, state, plan
// id or fingerprint may contain (fingerprints that do are hashed first, see
// fpKey). Times are big-endian nanoseconds so byte order is time order.
//
//	m/schema                          schema version (decimal)
//	p/<plan id>                       Plan JSON
//	r/<run id>                        Run JSON
//	e/<run id>\0<seq:8>               Event JSON
//	x/st/<state>\0<created:8><id>     runs by state
//	x/ct/<created:8><id>              runs by creation time
//	x/pa/<parent id>\0<created:8><id> runs by parent
//	x/pl/<plan id>\0<created:8><id>   runs by plan
//	x/fp/<fingerprint>\0<created:8><id> runs by fingerprint
//	x/sn/<short id:8><id>             runs by short id (shortid.go)
//	k/<submit key>                    the run id a submission created
//	w/<sweep id>                      Sweep JSON (campaign.go)
//	x/sw/<sweep id>\0<created:8><id>  runs by sweep
const (
	schemaKey = "m/schema"
	planPfx   = "p/"
	runPfx    = "r/"
	eventPfx  = "e/"
	idxState  = "x/st/"
	idxTime   = "x/ct/"
	idxParent = "x/pa/"
	idxPlan   = "x/pl/"
	idxFP     = "x/fp/"
	idxShort  = "x/sn/"
	submitPfx = "k/"
	sweepPfx  = "w/"
	idxSweep  = "x/sw/"
)

func runKey(id string) []byte  { return []byte(runPfx + id) }
func planKey(id string) []byte { return []byte(planPfx + id) }

func submitKey(key string) []byte { return []byte(submitPfx + key) }

func eventPrefix(runID string) []byte { return []byte(eventPfx + runID + "\x00") }

func eventKey(runID string, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(eventPrefix(runID), seq)
}

func timeBytes(t time.Time) []byte {
	n := t.UnixNano()
	if t.IsZero() || n < 0 {
		n = 0
	}
	return binary.BigEndian.AppendUint64(nil, uint64(n))
}

// indexPrefix is the prefix of one index bucket: idxTime has a single
// bucket; the others are keyed by a value (state, parent, plan, fingerprint).
func indexPrefix(idx, value string) []byte {
	if idx == idxTime {
		return []byte(idxTime)
	}
	return []byte(idx + value + "\x00")
}

func indexKey(idx, value string, created time.Time, id string) []byte {
	k := indexPrefix(idx, value)
	k = append(k, timeBytes(created)...)
	return append(k, id...)
}

// idFromIndexKey returns the run id at the end of an index key.
func idFromIndexKey(prefix, key []byte) string {
	if len(key) < len(prefix)+8 {
		return ""
	}
	return string(key[len(prefix)+8:])
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// runIndexes lists the index keys a run occupies.
func runIndexes(r *Run) [][]byte {
	keys := [][]byte{
		indexKey(idxTime, "", r.CreatedAt, r.ID),
		indexKey(idxState, string(r.State), r.CreatedAt, r.ID),
	}
	if r.ParentID != "" {
		keys = append(keys, indexKey(idxParent, r.ParentID, r.CreatedAt, r.ID))
	}
	if r.PlanID != "" {
		keys = append(keys, indexKey(idxPlan, r.PlanID, r.CreatedAt, r.ID))
	}
	if r.Fingerprint != "" {
		keys = append(keys, indexKey(idxFP, fpKey(r.Fingerprint), r.CreatedAt, r.ID))
	}
	if r.Campaign != nil && r.Campaign.Sweep != "" {
		keys = append(keys, indexKey(idxSweep, r.Campaign.Sweep, r.CreatedAt, r.ID))
	}
	if n, ok := parseShort(r.Short); ok {
		keys = append(keys, shortKey(n, r.ID))
	}
	return keys
}
