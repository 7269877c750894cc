package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/runbox/runbox/api"
	"github.com/runbox/runbox/store"
)

// DamageFile, in the home, records a store the daemon found damaged and
// salvaged. Every daemon reports it in /v1/health until `runbox doctor`
// has checked the store, so the news outlives the daemon that found it.
const DamageFile = "store-damage.json"

// StoreDir is where a home keeps its store.
func StoreDir(home string) string { return filepath.Join(home, "store") }

// openStore opens the home's store. A damaged one is never used as it is
// (Pebble would drop every write after the damage and runs that ended
// would come back as running or lost): the daemon logs the damage,
// salvages the store (a copy of it is kept), corrects runs from their run
// directories and records what it did for the CLI.
func openStore(ctx context.Context, o Options, log *slog.Logger) (*store.Store, *api.StoreDamage, error) {
	dir := StoreDir(o.Home)
	st, err := store.Open(dir, store.Options{})
	if err == nil {
		return st, ReadDamage(o.Home), nil
	}
	if !errors.Is(err, store.ErrCorrupt) {
		return nil, nil, fmt.Errorf("daemon: open store: %w", err)
	}
	log.Error("daemon: the store is damaged; salvaging it", "err", err)
	st, rep, serr := store.Salvage(dir, store.Options{})
	if serr != nil {
		backup := ""
		if rep != nil {
			backup = " (a copy is in " + rep.Backup + ")"
		}
		return nil, nil, fmt.Errorf("daemon: %w; salvaging it failed%s: %w", err, backup, serr)
	}
	fixes, ferr := FromDisk(ctx, o.Home, st, o.Sandboxes, true)
	for _, f := range fixes {
		log.Warn("daemon: store salvage: " + f.String())
	}
	if ferr != nil {
		log.Error("daemon: store salvage: correcting runs from their directories", "err", ferr)
	}
	d := &api.StoreDamage{
		Detail: err.Error(), Found: time.Now().UTC(), Backup: rep.Backup,
		Replayed: rep.Replayed, RunsFixed: len(fixes),
	}
	lost := ""
	if rep.WAL != "" && rep.AfterDamage == 0 {
		// The damage was in the log's last write(s), after which it was
		// closed: those are lost, and a run they ended comes back running
		// until recovery reads its end (and true times) from its exit record.
		lost = "; the damaged write(s) at the end of " + rep.WAL + " are lost: runs they ended get their end back from their exit records"
	}
	d.Message = fmt.Sprintf("the store was damaged and the daemon salvaged it at start: %d writes put back (%d from past the damage), %d run(s) corrected from their run directories%s; the damaged store is kept in %s; run 'runbox doctor' to check the store",
		rep.Replayed, rep.AfterDamage, len(fixes), lost, rep.Backup)
	if rep.Fresh {
		d.Message = "the store's tables were unreadable: the daemon started a new store from its logs and run directories; " + d.Message
	}
	log.Error("daemon: " + d.Message)
	if werr := WriteDamage(o.Home, d); werr != nil {
		log.Error("daemon: record store damage", "err", werr)
	}
	return st, d, nil
}

// ReadDamage returns the damage recorded in home, nil when none is.
func ReadDamage(home string) *api.StoreDamage {
	b, err := os.ReadFile(filepath.Join(home, DamageFile))
	if err != nil {
		return nil
	}
	var d api.StoreDamage
	if json.Unmarshal(b, &d) != nil {
		return &api.StoreDamage{Message: "the store was found damaged earlier (" + DamageFile + " does not decode); run 'runbox doctor'"}
	}
	return &d
}

// WriteDamage records d in home (atomically).
func WriteDamage(home string, d *api.StoreDamage) error {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	p := filepath.Join(home, DamageFile)
	if err := os.WriteFile(p+".tmp", b, 0o600); err != nil {
		return err
	}
	return os.Rename(p+".tmp", p)
}

// ClearDamage removes the record once the store has been checked.
func ClearDamage(home string) error {
	err := os.Remove(filepath.Join(home, DamageFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	return err
}
