package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"
)

// Bounds of what a snapshot run's end copies back into the workspace:
// past them files stay in the copy, which is then kept (WriteBack).
const (
	MaxWriteBackBytes = 1 << 30
	MaxWriteBackFiles = 10000
	maxReturnedNames  = 50
)

// stamp is what a file looked like when the snapshot copied it: the copy
// has the same size and time, so a change on either side shows.
type stamp struct {
	Size    int64 `json:"s"`
	ModTime int64 `json:"m"` // unix nanoseconds
}

func stampOf(st fs.FileInfo) stamp { return stamp{Size: st.Size(), ModTime: st.ModTime().UnixNano()} }

// StampsPath is the file, next to the copy dest, that lists the copied
// files' stamps (not in the copy: the run must not change it).
func StampsPath(dest string) string { return dest + ".files.json" }

// stampsFile is the file StampsPath names.
type stampsFile struct {
	Workdir string           `json:"workdir"`
	Files   map[string]stamp `json:"files"`
}

func writeStamps(workdir, dest string, stamps map[string]stamp) error {
	b, err := json.Marshal(stampsFile{Workdir: workdir, Files: stamps})
	if err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	if err := os.WriteFile(StampsPath(dest), b, 0o600); err != nil {
		return fmt.Errorf("snapshot: %w", err)
	}
	return nil
}

func readStamps(dest string) (*stampsFile, error) {
	b, err := os.ReadFile(StampsPath(dest))
	if err != nil {
		return nil, fmt.Errorf("snapshot: %w", err)
	}
	var f stampsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("snapshot: %s: %w", StampsPath(dest), err)
	}
	return &f, nil
}

// LinkNew links into the copy dest the workspace's paths that appeared
// since the snapshot (a run's start, maybe long after): what the runs a
// chained run waited for wrote is found, while every file the snapshot
// copied stays as it was. It returns the paths it linked.
func LinkNew(dest string) ([]string, error) {
	f, err := readStamps(dest)
	if err != nil {
		return nil, err
	}
	var linked []string
	err = linkLeftovers(f.Workdir, dest, ".", nil, &linked)
	for i, l := range linked {
		linked[i] = strings.TrimSuffix(l, " (ignored or not code)")
	}
	return linked, err
}

// WriteBack copies what a run wrote into its snapshot copy dest back into
// the workspace workdir: each regular file the run created (when the
// workspace has no file there) or changed (when the workspace's file is
// still the one the snapshot copied: a file the user changed since the
// submission is never overwritten). Links (paths left in place) were
// written in the workspace already and are not followed; links the run
// made are not copied. It returns the paths copied back and those that
// were not, with why; the caller keeps the copy when some were not.
func WriteBack(ctx context.Context, dest, workdir string) (returned, skipped []string, err error) {
	f, err := readStamps(dest)
	if err != nil {
		return nil, nil, err
	}
	stamps := f.Files
	// A workspace removed while the run ran gets nothing back: made again
	// for the run's outputs, it would look like the user's and hold only
	// them. The copy is kept instead (the caller keeps it for any skip).
	gone := ""
	if _, err := os.Stat(workdir); errors.Is(err, fs.ErrNotExist) {
		gone = "the workspace " + workdir + " is gone"
	}
	var budget int64 = MaxWriteBackBytes
	files := 0
	walkErr := filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rel, _ := filepath.Rel(dest, p)
			skipped = append(skipped, rel+" (unreadable: "+err.Error()+")")
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !d.Type().IsRegular() {
			return nil // directories are walked; links and devices are not the run's output
		}
		rel, _ := filepath.Rel(dest, p)
		st, err := d.Info()
		if err != nil {
			return nil
		}
		was, copied := stamps[filepath.ToSlash(rel)]
		if copied && stampOf(st) == was {
			return nil // as the snapshot copied it
		}
		why := ""
		switch {
		case gone != "":
			why = gone
		case files >= MaxWriteBackFiles:
			why = fmt.Sprintf("over %d files", MaxWriteBackFiles)
		case st.Size() > budget:
			why = "over the copy-back budget"
		default:
			why = copyBack(p, filepath.Join(workdir, rel), st, was, copied)
		}
		if why != "" {
			skipped = append(skipped, rel+" ("+why+")")
			return nil
		}
		files++
		budget -= st.Size()
		returned = append(returned, rel)
		return nil
	})
	sort.Strings(returned)
	return returned, skipped, walkErr
}

// copyBack puts one file of the copy into the workspace; it returns why
// it did not ("" when it did).
func copyBack(src, dst string, st fs.FileInfo, was stamp, copied bool) string {
	cur, err := os.Lstat(dst)
	switch {
	case !copied && err == nil:
		return "the workspace has a file of that name made since the submission"
	case copied && err != nil:
		return "removed from the workspace since the submission"
	case copied && (!cur.Mode().IsRegular() || stampOf(cur) != was):
		return "changed in the workspace since the submission"
	case !copied && !errors.Is(err, fs.ErrNotExist):
		return err.Error()
	}
	in, err := os.OpenFile(src, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return "unreadable: " + err.Error()
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err.Error()
	}
	// A temporary file renamed into place: the workspace never holds
	// half a file, and a new one never replaces what appeared meanwhile.
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".runbox-snapshot-*")
	if err != nil {
		return err.Error()
	}
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), st.Mode().Perm())
	}
	if err == nil {
		err = os.Chtimes(tmp.Name(), time.Now(), st.ModTime())
	}
	if err == nil {
		if copied {
			err = os.Rename(tmp.Name(), dst)
		} else if err = os.Link(tmp.Name(), dst); err == nil {
			// Link fails if dst appeared meanwhile: never overwrite.
			err = os.Remove(tmp.Name())
		}
	}
	if err != nil {
		os.Remove(tmp.Name())
		return err.Error()
	}
	return ""
}

// ReturnedNames bounds a list of paths for the record.
func ReturnedNames(paths []string) []string {
	if len(paths) > maxReturnedNames {
		return append(paths[:maxReturnedNames:maxReturnedNames], fmt.Sprintf("... %d more", len(paths)-maxReturnedNames))
	}
	return paths
}
