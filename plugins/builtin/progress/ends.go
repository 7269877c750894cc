package progress

import "strings"

// The end of a job, and the records of a tuner (Ray Tune) that say how
// far its trials got.

// finishedMark reports a line that says the whole job completed (each
// mark holds a prefilter literal; Vowpal Wabbit's is "finished run" on a
// line of its own, before its summary; a tuner's, all its trials
// TERMINATED).
func finishedMark(s string) bool {
	return index(s, "`Trainer.fit` stopped") >= 0 || index(s, "[Info] Finish train") >= 0 ||
		index(s, "completed training after ") >= 0 || strings.TrimSpace(s) == "finished run" ||
		allTrialsEnded(s)
}

// iterationKey reads a record that is only "training_iteration: N".
func iterationKey(t string) (int64, bool) {
	rest, ok := strings.CutPrefix(t, "training_iteration")
	if !ok {
		return 0, false
	}
	i := 0
	for i < len(rest) && (rest[i] == ':' || rest[i] == ' ' || rest[i] == '=' || rest[i] == '\t') {
		i++
	}
	n, j, ok := parseUint(rest, i)
	return n, ok && i > 0 && strings.TrimSpace(rest[j:]) == ""
}

// allTrialsEnded reads a tuner's status "Number of trials: 4/4 (4
// TERMINATED)": every trial it will run has ended.
func allTrialsEnded(t string) bool {
	k := index(t, "Number of trials: ")
	if k < 0 {
		return false
	}
	i := k + len("Number of trials: ")
	n, j, ok := parseUint(t, i)
	if !ok || j >= len(t) || t[j] != '/' {
		return false
	}
	m, j, ok := parseUint(t, j+1)
	if !ok || m != n || !hasAt(t, j, " (") {
		return false
	}
	e, j, ok := parseUint(t, j+2)
	return ok && e == n && hasAt(t, j, " TERMINATED)")
}

// finishedAfter returns N of "completed training after N iterations"
// (Ray's trial end), or 0.
func finishedAfter(s string) int64 {
	k := index(s, "completed training after ")
	if k < 0 {
		return 0
	}
	n, j, ok := parseUint(s, k+len("completed training after "))
	if !ok || !hasAt(s, j, " iteration") && !hasAt(s, j, " step") && !hasAt(s, j, " epoch") {
		return 0
	}
	return n
}
