package progress

import "strings"

// valueNames reads a record written value first, name after, the items
// apart by commas, as darknet prints its iterations (the format its
// README documents: iteration, loss, average loss, learning rate, time,
// images seen):
//
//	4: 285.326599, 289.835968 avg, 0.000100 rate, 838.66 seconds, 256 images
//	46: 16729.1, 20120.0 avg loss, 0.000000 rate, 22.9 seconds, 2944 images
//
// t is what follows the record's counter. The first item, a bare value,
// is the loss; "avg" alone is the average loss; counts, times and sizes
// are not metrics (addNew). It reports whether it read a loss.
func valueNames(t string, st *state) bool {
	first, loss := true, false
	for item := range strings.SplitSeq(t, ",") {
		item = strings.TrimSpace(item)
		v, j, ok := parseNum(item, 0)
		if !ok || j < len(item) && item[j] != ' ' { // "-nan avg": darknet's diverged loss
			return loss
		}
		name := strings.TrimSpace(item[j:])
		for i := 0; i < len(name); i++ {
			if !isLetter(name[i]) && name[i] != ' ' {
				return loss // not a name: prose, not this shape
			}
		}
		switch {
		case name == "" && first:
			name, loss = "loss", true
		case name == "avg" || name == "avg loss":
			name = "avg_loss"
		case name == "":
			return loss
		}
		first = false
		if !countOrTime(name) {
			st.addNew(name, v)
		}
	}
	return loss
}

// countOrTime reports an item that counts what was read or how long it
// took ("768 images", "1.25 seconds", "12.5 hours left").
func countOrTime(name string) bool {
	name = strings.TrimSuffix(name, " left")
	if k := strings.LastIndexByte(name, ' '); k >= 0 {
		name = name[k+1:]
	}
	switch name {
	case "s", "sec", "secs", "second", "seconds", "minutes", "hours", "days",
		"images", "samples", "examples", "tokens", "items", "steps":
		return true
	}
	return false
}
