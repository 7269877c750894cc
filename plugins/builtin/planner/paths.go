package planner

import (
	"path"
	"strings"
)

var (
	systemDirs = []string{"/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/boot", "/sys", "/proc", "/dev", "/root", "/var", "/opt", "/srv", "/home", "/Users", "/System", "/Library", "/Applications", "/private", "/snap", "/mnt", "/media"}
	userDirs   = []string{"/home", "/Users", "/mnt", "/media", "/srv", "/opt"}
	tempDirs   = []string{"/tmp", "/var/tmp", "/dev/shm", "/private/tmp"}
)

type pathClass int

const (
	pathInside pathClass = iota
	pathTemp
	pathWildcard
	pathVariable
	pathOutside
	pathSystem
	pathHome
	pathRoot
)

// classifyPath says where a path points relative to the workspace. It also
// returns the cleaned absolute path when there is one.
func classifyPath(t, workdir string) (pathClass, string) {
	t = strings.Trim(t, `"'`)
	switch t {
	case "*", ".", "./", "./*", ".*":
		return pathWildcard, ""
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "*"), "/.")
	for _, h := range []string{"~", "$HOME", "${HOME}"} {
		if t == h || t == h+"/" {
			return pathHome, ""
		}
		if strings.HasPrefix(t, h+"/") {
			return pathOutside, ""
		}
	}
	if strings.HasPrefix(t, "~") {
		return pathOutside, ""
	}
	if strings.HasPrefix(t, "$") {
		if strings.HasPrefix(t, "${") && strings.Contains(t, ":?") {
			return pathInside, "" // ${DIR:?} aborts when empty
		}
		if strings.Contains(t, "/") {
			return pathVariable, ""
		}
		return pathInside, ""
	}
	if t == "" {
		return pathInside, ""
	}
	if !strings.HasPrefix(t, "/") {
		c := path.Clean(t)
		if c == ".." || strings.HasPrefix(c, "../") {
			if workdir != "" && within(path.Join(workdir, c), workdir) {
				return pathInside, ""
			}
			return pathOutside, ""
		}
		if c == "." {
			return pathWildcard, ""
		}
		return pathInside, ""
	}
	c := path.Clean(t)
	switch {
	case c == "/":
		return pathRoot, c
	case workdir != "" && within(c, path.Clean(workdir)):
		return pathInside, c
	}
	for _, d := range tempDirs {
		if within(c, d) && c != d {
			return pathTemp, c
		}
	}
	for _, d := range userDirs {
		if within(c, d) && strings.Count(c, "/") > 2 {
			return pathOutside, c // someone's files, not the system's
		}
	}
	for _, d := range systemDirs {
		if within(c, d) {
			return pathSystem, c
		}
	}
	return pathOutside, c
}

// isSystemTop reports whether p is a system directory itself or one level
// below it (/usr, /usr/lib): deleting it breaks the machine.
func isSystemTop(p string) bool {
	return strings.Count(strings.Trim(p, "/"), "/") <= 1
}

func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}
