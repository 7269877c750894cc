package classify

import (
	"strings"

	"github.com/runbox/runbox/sdk"
)

// knownCommands are programs that Python code often runs through subprocess;
// FileNotFoundError naming one of them means the program is missing.
var knownCommands = map[string]bool{
	"ffmpeg": true, "ffprobe": true, "nvcc": true, "git": true, "git-lfs": true, "java": true, "node": true, "npm": true, "gcc": true,
	"g++": true, "cc": true, "c++": true, "make": true, "cmake": true, "ninja": true, "nvidia-smi": true, "docker": true, "sox": true,
	"tesseract": true, "pdflatex": true, "latex": true, "dot": true, "wget": true, "curl": true, "unzip": true, "tar": true, "espeak": true,
	"espeak-ng": true, "rustc": true, "cargo": true, "conda": true, "pip": true, "python": true, "python3": true, "bash": true, "sh": true,
}

func matchFile(sc *scanner, i int, l *line) bool {
	lc := l.lc
	// matchLine calls this only for lines that hold one of its gates.
	path := ""
	for _, m := range []string{"no such file or directory:", "can't open file", "unable to find", "couldn't find a dataset script at", "cannot find the path specified:", "file not found:", "isadirectoryerror: [errno 21] is a directory:", "name = "} {
		if path = quotedAfter(l.text, lc, m); path != "" {
			break
		}
	}
	if path == "" && strings.HasSuffix(lc, ": no such file or directory") {
		path = segmentBefore(l.text, lc, ": no such file or directory")
		for _, p := range []string{"cannot stat ", "cannot access ", "cannot open ", "can't open ", "failed to open ", "cannot create "} {
			if k := strings.Index(strings.ToLower(path), p); k >= 0 {
				path = unquote(path[k+len(p):])
			}
		}
	}
	if path == "" {
		if k := strings.Index(lc, "notfounderror: "); k >= 0 && strings.Contains(lc, "no such file") { // TensorFlow "NotFoundError: x; No such file"
			path = l.text[k+15:]
			if e := strings.IndexByte(path, ';'); e > 0 {
				path = path[:e]
			}
		}
	}
	if path == "" {
		for _, m := range []string{"no file named ", "does not appear to have a file named ", "dataset script at ", "unable to find "} {
			if k := strings.Index(lc, m); k >= 0 {
				path = unquote(strings.Fields(l.text[k+len(m):] + " x")[0])
				break
			}
		}
	}
	if path == "" && has(lc, "no (supported) data files found in ", "data files found in ") {
		path = unquote(strings.TrimRight(restAfter(l.text, lc, "found in "), ". "))
	}
	if path == "" && has(lc, "does not exist") {
		if !has(lc, "error", "file", "path", "directory", "checkpoint") {
			return false
		}
		path = firstQuoted(l.text)
	}
	if path == "" && !has(lc, "no such file", "[errno 2]", "filenotfounderror", "errno = 2", "datafilesnotfounderror") {
		return false
	}
	t := sc.tbOf[i]
	if path != "" && !strings.ContainsAny(path, "/\\.") && (knownCommands[path] || t >= 0 && strings.HasSuffix(sc.tbs[t].frame.file, "subprocess.py")) {
		c := commandCand(path, 0.85)
		c.msg = "The program `" + path + "` that the script tried to run was not found on PATH."
		sc.add(i, c)
		return true
	}
	c := cand{code: sdk.CodeFileNotFound, conf: 0.9, details: setDetail(nil, "path", path)}
	if path != "" {
		c.msg = "The file or directory `" + path + "` does not exist"
	} else {
		c.msg = "A file or directory does not exist: " + clip(l.text, 200)
	}
	if strings.Contains(lc, "can't open file") {
		c.msg = "Python could not open the script `" + path + "`: it does not exist"
	}
	if t >= 0 && sc.tbs[t].user.file != "" && path != "" {
		c.msg += " (opened at " + sc.tbs[t].user.file + ":" + sc.tbs[t].user.line + ")"
		c.details["opened_at"] = sc.tbs[t].user.file + ":" + sc.tbs[t].user.line
	}
	c.msg += "."
	c.sugg = fileSuggestions(sc, path)
	sc.add(i, c)
	return true
}

func fileSuggestions(sc *scanner, path string) []string {
	var s []string
	if near := sc.nearPath(path); near != "" {
		s = append(s, "The run's command names `"+near+"`, which is close to the missing `"+path+"`: is that the path meant?")
	}
	switch {
	case path == "":
	case strings.HasPrefix(path, "/") || len(path) > 2 && path[1] == ':':
		s = append(s, "Check that `"+path+"` exists on this machine; an absolute path from another machine (or outside the container) will not.")
	default:
		s = append(s, "`"+path+"` is relative: it is resolved against the run's working directory. Run from the project root or build the path from the script's location (Path(__file__).parent).")
	}
	if sc.in.Sandbox == "docker" {
		s = append(s, "In the Docker sandbox only the workspace is mounted: put the data inside it, or mount the directory that holds it.")
	} else {
		s = append(s, "Check the working directory and any mounts: data created by an earlier step or downloaded separately may be missing here.")
	}
	if strings.HasSuffix(path, ".bin") || strings.HasSuffix(path, ".safetensors") || strings.Contains(path, "checkpoint") || strings.HasSuffix(path, ".pt") || strings.HasSuffix(path, ".ckpt") {
		s = append(s, "For a checkpoint or model file, check the output directory of the run that was meant to produce it, or download it again.")
	}
	return s
}

var gateFile = []string{"no such file", "[errno 2]", "filenotfounderror", "can't open file", "cannot find the", "does not exist", "does not appear to have a file",
	"no file named", "data files found", "datafilesnotfound", "unable to find", "couldn't find", "notfounderror", "errno = 2", "isadirectoryerror", "notadirectoryerror"}
