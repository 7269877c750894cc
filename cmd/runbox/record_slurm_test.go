package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/runbox/runbox/api/client"
	"github.com/runbox/runbox/internal/testwait"
)

// A Slurm run has no live resource samples (sstat needs accounting): its
// events say so, once, and it has no machine figures rather than zeros;
// its record is still taken.
func TestSlurmSaysItHasNoSysMetrics(t *testing.T) {
	needSlurm(t)
	e := newEnv(t)
	e.must("run", "--sandbox", "slurm", "--", "sh", "-c", "sleep 5")
	r := e.getRun("1")
	if r.Machine != nil {
		t.Fatalf("machine figures for a Slurm run: %+v", r.Machine)
	}
	c := client.New(client.Options{Home: e.home, Socket: filepath.Join(e.home, "runbox.sock")})
	var notes []string
	err := testwait.For("the note", 10*time.Second, func() error {
		evs, err := c.Events(context.Background(), r.ID, 0)
		if err != nil {
			return err
		}
		notes = nil
		for _, ev := range evs {
			if strings.HasPrefix(ev.Message, "sys/ metrics: none") {
				notes = append(notes, ev.Message)
			}
		}
		if len(notes) == 0 {
			return errSlurmNoNote
		}
		return nil
	})
	if err != nil || len(notes) != 1 {
		t.Fatalf("notes %v: %v", notes, err)
	}
	if rec := e.completeRecord("1").Record; rec.Sandbox != "slurm" {
		t.Fatalf("record %+v", rec)
	}
}

var errSlurmNoNote = errors.New("no sys/ note yet")
