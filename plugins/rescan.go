package plugins

import (
	"bytes"
	"encoding/binary"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
)

// Live pick-up: a daemon's Host lives as long as runs keep coming, and a
// bundle installed, upgraded or removed meanwhile must count for the next
// run without a restart. Before each new Parser, Plan, Classify or
// Plugins, the Host compares a signature of its plugin directories
// (names, sizes and modification times, one level into each bundle) with
// the one it last loaded from, and on a change discovers again: modules
// whose file and bytes are unchanged are kept, loaded as they are; new
// ones start loading; gone ones are retired (their idle instances closed
// at Close, since a run that began before may still be calling them).

// dirsSignature summarises what discover would read from dirs.
func dirsSignature(dirs []string) uint64 {
	h := fnv.New64a()
	var buf []byte
	for _, dir := range dirs {
		buf = appendStat(buf[:0], dir)
		entries, err := os.ReadDir(dir)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				continue // as discover: an install under way is not there yet
			}
			p := filepath.Join(dir, e.Name())
			buf = appendStat(buf, p)
			if e.IsDir() {
				sub, _ := os.ReadDir(p)
				for _, s := range sub {
					buf = appendStat(buf, filepath.Join(p, s.Name()))
				}
			}
		}
		if err != nil {
			buf = append(buf, "unreadable\x00"...)
		}
		h.Write(buf)
	}
	return h.Sum64()
}

// appendStat appends p's name, size and modification time.
func appendStat(buf []byte, p string) []byte {
	buf = append(buf, p...)
	buf = append(buf, 0)
	fi, err := os.Lstat(p)
	if err != nil {
		return append(buf, "gone\x00"...)
	}
	buf = binary.LittleEndian.AppendUint64(buf, uint64(fi.Size()))
	return binary.LittleEndian.AppendUint64(buf, uint64(fi.ModTime().UnixNano()))
}

// mods returns the current modules (a snapshot: refresh replaces the slice).
func (h *Host) mods() []*module {
	h.modMu.RLock()
	defer h.modMu.RUnlock()
	return h.modules
}

// refresh discovers the plugins again when the plugin directories changed
// since the last look.
func (h *Host) refresh() {
	if len(h.cfg.Dirs) == 0 || h.closed.Load() {
		return
	}
	// A plugin the breaker switched off stays off when it comes back
	// unchanged (same source and sha256), as across a restart.
	h.restore(h.rescan(dirsSignature(h.cfg.Dirs)))
}

// rescan discovers again when sig differs from the last, and returns the
// modules it added.
func (h *Host) rescan(sig uint64) []*module {
	h.modMu.Lock()
	defer h.modMu.Unlock()
	if sig == h.dirSig {
		return nil
	}
	h.dirSig = sig
	old := map[string]*module{}
	for _, m := range h.modules {
		old[m.source] = m
	}
	var next, added []*module
	for _, s := range discover(h.cfg) {
		if m, ok := old[s.path]; ok && s.err == nil && m.h == h && bytes.Equal(m.wasm, s.wasm) {
			next = append(next, m)
			delete(old, s.path)
			continue
		}
		m := h.adopt(s)
		next = append(next, m)
		added = append(added, m)
	}
	for _, m := range old {
		h.retired = append(h.retired, m)
	}
	h.modules = next
	if len(added) > 0 || len(old) > 0 {
		h.log.Info("plugin directory changed: plugins reloaded", "added_or_changed", len(added), "gone_or_replaced", len(old))
	}
	return added
}

// adopt makes a module of s: failed at once when s could not be read,
// loading in the background when its kind is unknown (a user plugin).
func (h *Host) adopt(s source) *module {
	m := newModule(h, s)
	switch {
	case s.err != nil:
		m.once.Do(func() {
			m.loadErr = s.err
			m.breaker.fail(s.err, 0, 0)
			close(m.ready)
		})
		h.log.Warn("plugin not loaded", "plugin", s.path, "err", s.err)
	case m.kind == "":
		m.start()
	}
	return m
}
