package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/cmd/internal/cli"
	"github.com/runbox/runbox/host/daemon"
	"github.com/runbox/runbox/sandbox"
	"github.com/runbox/runbox/sandbox/process"
	"github.com/runbox/runbox/store"
)

// doctorReport is what `runbox doctor` found and did (--json prints it).
type doctorReport struct {
	Home  string `json:"home"`
	Store string `json:"store"`
	// Reported is the damage a daemon found and recorded earlier.
	Reported *api.StoreDamage `json:"reported,omitempty"`
	// Damaged is why the store could not be opened as it is.
	Damaged string               `json:"damaged,omitempty"`
	Salvage *store.SalvageReport `json:"salvage,omitempty"`
	Check   *store.CheckReport   `json:"check,omitempty"`
	Repair  *store.RepairReport  `json:"repair,omitempty"`
	// Runs are the runs whose record disagrees with their run directory.
	Runs   []daemon.Fix `json:"runs,omitempty"`
	Backup string       `json:"backup,omitempty"`
	// Healthy is true when the store is (now) sound and agrees with disk.
	Healthy  bool `json:"healthy"`
	Repaired bool `json:"repaired"`
}

// runDoctor checks the home's store; it exits 1 when it is not healthy.
func runDoctor(ctx context.Context, a *cli.App, c *cli.DoctorCmd) error {
	rep, err := doctor(ctx, a.G.Home, c.Repair)
	if err != nil {
		return err
	}
	if a.G.JSON {
		if err := a.PrintJSON(rep); err != nil {
			return err
		}
	} else {
		printDoctor(os.Stdout, rep, c.Repair)
	}
	if !rep.Healthy {
		return cli.ExitCode(1)
	}
	return nil
}

// doctor verifies the store of home and, with repair, repairs it. It
// refuses while a daemon owns the home: repairing a store in use would
// race its writes.
func doctor(ctx context.Context, home string, repair bool) (*doctorReport, error) {
	unlock, err := daemon.LockHome(home)
	if errors.Is(err, daemon.ErrRunning) {
		pid, _ := os.ReadFile(filepath.Join(home, "daemon.lock"))
		return nil, fmt.Errorf("a runbox daemon (pid %s) is using %s; stop it first (kill %s; it finishes its active runs on its next start) and run doctor again",
			strings.TrimSpace(string(pid)), home, strings.TrimSpace(string(pid)))
	}
	if err != nil {
		return nil, err
	}
	defer unlock()
	dir := daemon.StoreDir(home)
	rep := &doctorReport{Home: home, Store: dir, Reported: daemon.ReadDamage(home)}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		rep.Healthy = true // nothing stored yet
		return rep, nil
	}
	sbs := map[string]sandbox.Sandbox{sandbox.Process: process.New(process.Options{})}

	st, err := store.Open(dir, store.Options{})
	switch {
	case errors.Is(err, store.ErrCorrupt) && repair:
		rep.Damaged = err.Error()
		var serr error
		st, rep.Salvage, serr = store.Salvage(dir, store.Options{})
		if serr != nil {
			return rep, fmt.Errorf("doctor: salvage: %w", serr)
		}
		rep.Backup, rep.Repaired = rep.Salvage.Backup, true
	case errors.Is(err, store.ErrCorrupt):
		rep.Damaged = err.Error()
		return rep, nil
	case err != nil:
		return nil, fmt.Errorf("doctor: %w", err)
	}
	defer func() { _ = st.Close() }()

	if rep.Check, err = st.Check(ctx); err != nil {
		return rep, err
	}
	if rep.Runs, err = daemon.FromDisk(ctx, home, st, sbs, false); err != nil {
		return rep, err
	}
	if repair && (!rep.Check.OK() || len(rep.Runs) > 0) {
		if rep.Backup == "" {
			// Copy the store before changing it: close it so the copy is
			// of files no one writes.
			if err := st.Close(); err != nil {
				return rep, err
			}
			if rep.Backup, err = store.BackupDir(dir); err != nil {
				return rep, err
			}
			if st, err = store.Open(dir, store.Options{}); err != nil {
				return rep, err
			}
		}
		if rep.Repair, err = st.Repair(ctx); err != nil {
			return rep, err
		}
		if rep.Runs, err = daemon.FromDisk(ctx, home, st, sbs, true); err != nil {
			return rep, err
		}
		if rep.Check, err = st.Check(ctx); err != nil {
			return rep, err
		}
		rep.Repaired = true
	}
	rep.Healthy = rep.Check.OK() && (len(rep.Runs) == 0 || rep.Repaired)
	if rep.Healthy && rep.Reported != nil {
		if err := daemon.ClearDamage(home); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

func printDoctor(w io.Writer, r *doctorReport, repair bool) {
	fmt.Fprintf(w, "store: %s\n", r.Store)
	if r.Reported != nil {
		fmt.Fprintf(w, "  reported by the daemon: %s\n", r.Reported.Message)
	}
	if r.Damaged != "" {
		fmt.Fprintf(w, "  DAMAGED: %s\n", r.Damaged)
	}
	if s := r.Salvage; s != nil {
		fmt.Fprintf(w, "  salvaged: %d writes put back (%d from past the damage", s.Replayed, s.AfterDamage)
		if s.Unreadable > 0 {
			fmt.Fprintf(w, ", %d unreadable", s.Unreadable)
		}
		fmt.Fprintln(w, ")")
		if s.Fresh {
			fmt.Fprintln(w, "  the store's tables were unreadable: started a new store from its logs")
		}
	}
	if c := r.Check; c != nil {
		fmt.Fprintf(w, "  records: %d runs, %d plans, %d events, %d index entries, %d submit keys\n",
			c.Runs, c.Plans, c.Events, c.Indexes, c.SubmitKeys)
	}
	if p := r.Repair; p != nil {
		if n := len(p.Found.Problems); n > 0 {
			fmt.Fprintf(w, "  repaired %d problem(s):\n", n)
			for _, l := range p.Found.Problems {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		fmt.Fprintf(w, "  rebuilt %d index entries, removed %d unreadable or stale keys\n", p.Indexes, p.Removed)
	}
	if c := r.Check; c != nil && !c.OK() {
		fmt.Fprintf(w, "  %d problem(s):\n", len(c.Problems))
		for _, l := range c.Problems {
			fmt.Fprintf(w, "    %s\n", l)
		}
	}
	if len(r.Runs) > 0 {
		verb := "disagree with"
		if r.Repaired {
			verb = "corrected from"
		}
		fmt.Fprintf(w, "runs: %d %s their run directories:\n", len(r.Runs), verb)
		for _, f := range r.Runs {
			fmt.Fprintf(w, "  %s\n", f)
		}
	}
	if r.Backup != "" {
		fmt.Fprintf(w, "backup: the store as it was is in %s\n", r.Backup)
	}
	if r.Reported != nil && r.Healthy {
		fmt.Fprintln(w, "the daemon's report of damage is cleared")
	}
	switch {
	case r.Healthy && r.Repaired:
		fmt.Fprintln(w, "result: repaired; runs set to running are finished from their exit records when the daemon next starts")
	case r.Healthy:
		fmt.Fprintln(w, "result: healthy")
	case repair:
		fmt.Fprintln(w, "result: NOT healthy after repair; keep the backup and report this")
	default:
		fmt.Fprintln(w, "result: NOT healthy; run 'runbox doctor --repair' (it keeps a copy of the store first)")
	}
}
