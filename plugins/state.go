package plugins

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// offRecord is one plugin the circuit breaker switched off, as
// Config.StateFile keeps it. It applies to the same module only: a plugin
// replaced by a new build (another sha256) starts afresh.
type offRecord struct {
	Source   string    `json:"source"`
	SHA256   string    `json:"sha256"`
	Name     string    `json:"name,omitempty"`
	Reason   string    `json:"reason"`
	Failures int       `json:"consecutive_failures"`
	Until    time.Time `json:"until"`
}

type stateDoc struct {
	Off []offRecord `json:"off"`
}

// readState returns the records of StateFile still in force; none when
// there is no file. A file that cannot be read or decoded is logged and
// ignored: it only remembers switch-offs, which end by themselves.
func (h *Host) readState() []offRecord {
	if h.cfg.StateFile == "" {
		return nil
	}
	b, err := os.ReadFile(h.cfg.StateFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var doc stateDoc
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		h.log.Warn("plugin state ignored", "file", h.cfg.StateFile, "err", err)
		return nil
	}
	now := time.Now()
	var out []offRecord
	for _, o := range doc.Off {
		if o.Until.After(now) {
			out = append(out, o)
		}
	}
	return out
}

// restoreState switches off again the modules StateFile says are off.
func (h *Host) restoreState() { h.restore(h.mods()) }

// restore switches off again those of mods StateFile says are off.
func (h *Host) restore(mods []*module) {
	if len(mods) == 0 {
		return
	}
	recs := h.readState()
	for _, m := range mods {
		for _, o := range recs {
			// Hashing costs a few ms per module: only for those named.
			if o.Source == m.source && o.SHA256 == m.sha() {
				m.breaker.restore(o, h.cfg.FailureThreshold)
			}
		}
	}
}

// saveOff records in StateFile that m is off until until (rec), or that
// it is on again (rec nil). Failing to write is logged: the breaker
// still works within this process.
func (h *Host) saveOff(m *module, rec *offRecord) {
	if h.cfg.StateFile == "" {
		return
	}
	h.stateMu.Lock()
	defer h.stateMu.Unlock()
	doc := stateDoc{Off: []offRecord{}}
	for _, o := range h.readState() {
		if o.Source != m.source {
			doc.Off = append(doc.Off, o)
		}
	}
	if rec != nil {
		doc.Off = append(doc.Off, *rec)
	}
	if err := writeFileAtomic(h.cfg.StateFile, doc); err != nil {
		h.log.Warn("plugin state not saved", "file", h.cfg.StateFile, "err", err)
	}
}

// writeFileAtomic writes v as JSON to path through a temporary file and a
// rename, so that a reader never sees half a file.
func writeFileAtomic(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("state dir: %w", err)
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".plugin-state-*")
	if err != nil {
		return fmt.Errorf("temp file: %w", err)
	}
	defer os.Remove(f.Name()) // after a successful rename: nothing there
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", f.Name(), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", f.Name(), err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("rename: %w", err)
	}
	return nil
}
