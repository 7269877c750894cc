package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/runbox/runbox/plugins/bundle"
	"github.com/runbox/runbox/plugins/rules"
	"github.com/runbox/runbox/sdk"
)

// ruleSet is the rules files of the installed bundles (package rules),
// which the host interprets itself: progress formats are read line by
// line in Parser.Feed, failure signatures are asked beside the
// classifier plugins in Classify.
type ruleSet struct {
	mu    sync.RWMutex
	sig   uint64
	files []*rules.File
}

// rules returns the rules files of cfg.Dirs' bundles, read again when the
// directories changed. A file that fails its checksum or does not parse is
// logged and skipped (install checks both, so it was changed after).
func (h *Host) rules() []*rules.File {
	if len(h.cfg.Dirs) == 0 {
		return nil
	}
	sig := dirsSignature(h.cfg.Dirs)
	h.ruleSet.mu.RLock()
	files, same := h.ruleSet.files, h.ruleSet.sig == sig && sig != 0
	h.ruleSet.mu.RUnlock()
	if same {
		return files
	}
	files = nil
	for _, dir := range h.cfg.Dirs {
		ms, _ := filepath.Glob(filepath.Join(dir, "*", bundle.ManifestFile))
		for _, mp := range ms {
			raw, err := os.ReadFile(mp)
			if err != nil {
				continue
			}
			var bm bundle.Manifest
			if json.Unmarshal(raw, &bm) != nil {
				continue
			}
			if err := h.cfg.RequireSigned.admit(bm); err != nil {
				if len(bm.Rules) > 0 {
					h.log.Warn("rules files not read", "bundle", filepath.Dir(mp), "err", err)
				}
				continue
			}
			for _, f := range bm.Rules {
				p := filepath.Join(filepath.Dir(mp), filepath.FromSlash(f.File))
				b, err := os.ReadFile(p)
				if err == nil {
					if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != strings.ToLower(f.SHA256) {
						err = bundle.ErrChecksum
					}
				}
				var rf *rules.File
				if err == nil {
					rf, err = rules.Parse(b)
				}
				if err != nil {
					h.log.Warn("rules file skipped", "file", p, "err", err)
					continue
				}
				files = append(files, rf)
			}
		}
	}
	h.ruleSet.mu.Lock()
	h.ruleSet.files, h.ruleSet.sig = files, sig
	h.ruleSet.mu.Unlock()
	return files
}

// classifyRules is the most confident answer of the rules files' failure
// signatures, or nil.
func classifyRules(files []*rules.File, in sdk.ClassifyInput) *sdk.Failure {
	var best *sdk.Failure
	for _, rf := range files {
		if f := rf.Classify(in); f != nil && (best == nil || f.Confidence > best.Confidence) {
			f.Plugin = "rules:" + rf.Name
			best = f
		}
	}
	return best
}
