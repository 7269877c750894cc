package mcp

import (
	"context"
	"fmt"
	"strings"

	"github.com/runbox/runbox/api"
)

// What ran and what changed, as an agent reads it: a compact summary of
// the record (the whole one, with its diff, is `runbox status --json`),
// the short list of what changed since the command last worked, and the
// machine's use.

type sinceWorked struct {
	RunID   string   `json:"run_id" jsonschema:"the last run of the same command that succeeded"`
	Changes []string `json:"changes" jsonschema:"what changed since, most suspect first (a package upgrade before a parameter change); says so when nothing recorded differs"`
}

type whatRan struct {
	Commit      string   `json:"commit,omitempty"`
	Branch      string   `json:"branch,omitempty"`
	Dirty       bool     `json:"dirty,omitempty" jsonschema:"uncommitted changes or untracked files"`
	ChangedFile []string `json:"changed_files,omitempty" jsonschema:"files with uncommitted changes"`
	Interpreter string   `json:"interpreter,omitempty"`
	Packages    int      `json:"packages,omitempty" jsonschema:"installed distributions recorded"`
	Image       string   `json:"image,omitempty"`
	Host        string   `json:"host,omitempty"`
	Notes       []string `json:"notes,omitempty" jsonschema:"what could not be recorded and why"`
}

type machine struct {
	CPUPercent     float64 `json:"cpu_percent"`
	PeakCPUPercent float64 `json:"peak_cpu_percent"`
	RSSBytes       uint64  `json:"rss_bytes"`
	PeakRSSBytes   uint64  `json:"peak_rss_bytes"`
}

// addRecord fills the record's parts of a run's view.
func addRecord(out *runOut, r *api.Run) {
	if sw := r.SinceWorked; sw != nil {
		out.SinceWorked = &sinceWorked{RunID: sw.RunID, Changes: mcpTexts(sw.Summary)}
	}
	if m := r.Machine; m != nil {
		out.Machine = &machine{CPUPercent: m.CPUPercent, PeakCPUPercent: m.PeakCPUPercent, RSSBytes: m.RSSBytes, PeakRSSBytes: m.PeakRSSBytes}
	}
	rec := r.Record
	if rec == nil {
		return
	}
	w := &whatRan{Notes: rec.Notes}
	if c := rec.Code; c != nil {
		w.Commit, w.Branch, w.Dirty, w.ChangedFile = c.Commit, c.Branch, c.Dirty, c.DiffFiles
	}
	if in := rec.Interpreter; in != nil {
		w.Interpreter = strings.TrimSpace(in.Path + " " + in.Version)
		w.Packages = len(in.Packages)
		if in.Note != "" {
			w.Notes = append(w.Notes, in.Note)
		}
	}
	if im := rec.Image; im != nil {
		w.Image = strings.TrimSpace(im.Name + " " + im.Digest)
	}
	if h := rec.Host; h != nil {
		w.Host = fmt.Sprintf("%s %s, %d cpus", h.OS, h.Kernel, h.CPUs)
		for _, g := range h.GPUs {
			w.Host += ", " + g.Name
		}
	}
	out.WhatRan = w
}

// sinceWorkedText is the summary's paragraph on what changed.
func sinceWorkedText(sw *sinceWorked) string {
	if sw == nil {
		return ""
	}
	return "\nsince it last worked (run " + sw.RunID + " succeeded):\n- " + strings.Join(sw.Changes, "\n- ")
}

// withWhatRan is an ended run as local_status gives it (with its record
// and what changed since it last worked), for local_wait's last answer;
// the run as waited for when that read fails.
func withWhatRan(ctx context.Context, s *server, r *api.Run) *api.Run {
	if full, err := s.c.Get(ctx, r.ID); err == nil && full.State == r.State {
		return full
	}
	return r
}
