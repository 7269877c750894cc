package cli

import (
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/runbox/runbox/api"
)

// IsolateFlags confine a process run (run, plan, exec).
type IsolateFlags struct {
	Isolate   string   `help:"Confine a process run: none, net (no network), fs (writable only in the workspace, its temp dir and --rw paths; home secrets unreadable) or full (both). Default: what the plan promises (none without a plan). A container already gives any level (refused only against --network bridge/host); a Slurm job refuses it." enum:",none,net,fs,full" default:"" placeholder:"LEVEL"`
	RW        []string `name:"rw" help:"With --isolate fs or full, also let the run write PATH (it must exist); at any level, a PATH in /tmp, /run or the runtime dir, which a confined run gets empty, is shown to it. Repeatable." placeholder:"PATH"`
	AllowRisk bool     `help:"Run a plan's critical risk even when this host cannot give the isolation the plan promised (refused otherwise)."`
}

// apply puts the flags into req, --rw paths made absolute and checked
// here, where a relative path means what the user meant.
func (f IsolateFlags) apply(req *api.RunRequest) error {
	req.Isolate, req.AllowRisk = f.Isolate, f.AllowRisk
	for _, p := range f.RW {
		abs, err := absPath(p)
		if err != nil {
			return err
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("--rw %s: does not exist (create it first, or leave the flag out)", p)
		}
		req.RW = append(req.RW, abs)
	}
	// Under net --rw still means something: a path in the run's private
	// /tmp, /run or runtime dir is bound back into it (an agent's socket
	// directory given on purpose).
	if len(f.RW) > 0 && f.Isolate == "none" {
		return fmt.Errorf("--rw has no effect with --isolate %s (nothing is confined): leave it out, or use --isolate net, fs or full", f.Isolate)
	}
	return nil
}

// printIsolation is a plan's isolation lines: what will be enforced here,
// and what the plan wanted but this host cannot give.
func printIsolation(w interface{ Write([]byte) (int, error) }, iso *api.Isolation) {
	if iso == nil {
		return
	}
	fmt.Fprintf(w, "isolate:\t%s\n", iso.Level)
	fmt.Fprintf(w, "  network:\t%s\n", iso.Network)
	fmt.Fprintf(w, "  filesystem:\t%s\n", iso.Filesystem)
	fmt.Fprintf(w, "  processes:\t%s\n", iso.Processes)
	if iso.Wanted != "" {
		fmt.Fprintf(w, "  wanted:\t%s — %s", iso.Wanted, iso.WantedReason)
		if iso.Unavailable != "" {
			fmt.Fprintf(w, "; not available here: %s", iso.Unavailable)
		}
		fmt.Fprintln(w)
		if iso.Refused {
			fmt.Fprintf(w, "  exec:\twill refuse this plan unless --allow-risk (or run it with --sandbox docker)\n")
		}
	}
}

// printIsolationInfo is `runbox backends`' account of what confinement
// the process backend gives on this host.
func printIsolationInfo(b api.Backends) {
	for _, h := range b.Backends {
		if h.Name != "process" || h.Info["isolation_levels"] == "" {
			continue
		}
		fmt.Println("\nprocess isolation (--isolate):")
		keys := make([]string, 0, len(h.Info))
		for k := range h.Info {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			switch k {
			case "landlock", "user_namespaces", "cgroup_memory":
				fmt.Printf("  %s: %s\n", strings.ReplaceAll(k, "_", " "), h.Info[k])
			}
		}
		can, cannot := isolationLevels(h.Info["isolation_levels"])
		fmt.Printf("  levels it can give: %s\n", can)
		if cannot != "" {
			fmt.Printf("  not on this host: %s\n", cannot)
		}
	}
}

// isolationLevels turns the backend's "isolation_levels" (the strongest
// level it gives, then " at most (why not the others)") into the list of
// levels --isolate can ask for here and a line on the rest. Network and
// filesystem confinement are independent, so the strongest level names
// the set: full gives all four, net gives none and net, and so on.
func isolationLevels(info string) (can, cannot string) {
	best, why, _ := strings.Cut(info, " at most (")
	sets := map[string][]string{
		"full": {"none", "net", "fs", "full"},
		"net":  {"none", "net"},
		"fs":   {"none", "fs"},
		"none": {"none"},
	}
	set, ok := sets[best]
	if !ok {
		return info, "" // a daemon newer than this client: say what it said
	}
	var rest []string
	for _, l := range sets["full"] {
		if !slices.Contains(set, l) {
			rest = append(rest, l)
		}
	}
	can = strings.Join(set, ", ")
	if len(rest) > 0 {
		cannot = strings.Join(rest, ", ")
		if why = strings.TrimSuffix(why, ")"); why != "" {
			cannot += " (" + why + ")"
		}
	}
	return can, cannot
}

// isolateLine is what `status` says a process run was confined to.
func isolateLine(s api.Spec) string {
	switch s.Isolate {
	case "", "none":
		return "none (host network and filesystem)"
	case "net":
		return "net (no network)"
	}
	line := s.Isolate + " (writable: workspace, temp dir"
	for _, p := range s.RW {
		line += ", " + p
	}
	if s.Isolate == "full" {
		return line + "; no network)"
	}
	return line + ")"
}
