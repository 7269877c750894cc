package planner

import (
	"path"
	"regexp"
	"strings"

	"github.com/runbox/runbox/sdk"
)

// Risk codes (stable: users and agents branch on them).
const (
	riskRmRoot         = "rm-root"
	riskRmHome         = "rm-home"
	riskRmSystem       = "rm-system-dir"
	riskRmOutside      = "rm-outside-workspace"
	riskRmVariable     = "rm-unguarded-variable"
	riskRmWildcard     = "rm-workspace-wildcard"
	riskPipeToShell    = "pipe-to-shell"
	riskRawDisk        = "raw-disk-write"
	riskFormat         = "disk-format"
	riskChmodSystem    = "chmod-system"
	riskForkBomb       = "fork-bomb"
	riskSudo           = "sudo"
	riskSystemWrite    = "system-write"
	riskInstall        = "runtime-install"
	riskNetwork        = "network-access"
	riskShutdown       = "shutdown"
	riskKillAll        = "kill-all"
	riskPrivileged     = "docker-privileged"
	riskShellDynamic   = "shell-dynamic-command"
	riskSecretEnv      = "reads-secret-env"
	riskCredentialFile = "reads-credentials-file"
	riskExecRemote     = "exec-remote-code"
	riskRemoteCode     = "trust-remote-code"
	riskNoGPU          = "gpu-unavailable"
	riskMLXHost        = "mlx-unsupported-host"
)

var (
	forkBombRe   = gate(regexp.MustCompile(`([A-Za-z_:][A-Za-z0-9_:]*)\(\)\{([A-Za-z_:][A-Za-z0-9_:]*)\|([A-Za-z_:][A-Za-z0-9_:]*)&\};([A-Za-z_:][A-Za-z0-9_:]*)`), "(){")
	fetchExecRe  = gate(regexp.MustCompile(`\b(?:(?:ba|z|da|k)?sh|eval|source|python3?)\b[^|;&]*(?:<\(|\$\(|`+"`"+`)\s*(?:curl|wget)\b`), "curl", "wget")
	shellExecRe  = regexp.MustCompile(`^(?:(?:ba|z|da|k)?sh|python[0-9.]*|perl|ruby|node)$`)
	rawDeviceRe  = regexp.MustCompile(`^/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|md|dm-|mapper/|loop)`)
	benignDevice = map[string]bool{"/dev/null": true, "/dev/zero": true, "/dev/stdout": true, "/dev/stderr": true, "/dev/tty": true, "/dev/random": true, "/dev/urandom": true}
)

// scanCommand checks the command itself: frameworks from its launcher and
// the shell risks of what it runs.
func (a *analysis) scanCommand() {
	cmd := a.in.Command
	if len(cmd) == 0 {
		return
	}
	ev := "command: " + clip(shellJoin(cmd), 160)
	if len(cmd) == 1 || hasShellOperator(cmd) {
		a.shellLine(strings.Join(cmd, " "), ev, 0)
		return
	}
	a.shellWords(cmd, ev, 0)
}

// shellLine checks one line of shell.
func (a *analysis) shellLine(line, ev string, depth int) {
	if depth > 3 {
		return
	}
	compact := strings.Join(strings.Fields(line), "")
	if m := forkBombRe.FindStringSubmatch(compact); m != nil && m[1] == m[2] && m[2] == m[3] && m[3] == m[4] {
		a.addRisk(sdk.SeverityCritical, riskForkBomb, "fork bomb: a function that spawns itself until the machine runs out of processes", ev)
	}
	if fetchExecRe.MatchString(line) {
		a.addRisk(sdk.SeverityCritical, riskPipeToShell, "runs code downloaded from the network without checking it", ev)
		a.network = append(a.network, ev)
	}
	segs := shellSegments(line)
	fetchIn := map[int]bool{}
	for _, s := range segs {
		words, _ := unwrap(s.words)
		if len(words) == 0 {
			continue
		}
		base := path.Base(words[0])
		if s.pipedInto && fetchIn[s.pipeline] && shellExecRe.MatchString(base) {
			a.addRisk(sdk.SeverityCritical, riskPipeToShell, "pipes a download straight into "+base+": runs code from the network without checking it", ev)
		}
		if base == "curl" || base == "wget" {
			fetchIn[s.pipeline] = true
		}
		a.shellWords(s.words, ev, depth)
	}
}

// shellWords checks one simple command given as argv.
func (a *analysis) shellWords(argv []string, ev string, depth int) {
	words, sudo := unwrap(argv)
	if sudo != "" {
		a.addRisk(sdk.SeverityHigh, riskSudo, "runs "+sudo+": the command asks for root on the host", ev)
	}
	for _, t := range redirectTargets(words) {
		a.checkWrite(t, "redirects output to", ev)
	}
	if len(words) == 0 {
		return
	}
	a.commandFrameworks(words, ev)
	a.netWords(words) // allownet.go
	base := path.Base(words[0])
	args := words[1:]
	if strings.HasPrefix(base, "mkfs") {
		base = "mkfs"
		a.addRisk(sdk.SeverityCritical, riskFormat, "mkfs formats a filesystem", ev)
	}
	switch base {
	case "echo", "printf", ":", "true", "test", "[", "[[":
		// Text, not actions; redirects were checked above.
	case "rm", "rmdir", "unlink", "shred":
		a.checkRm(base, args, ev)
	case "dd":
		for _, w := range args {
			if t, ok := strings.CutPrefix(w, "of="); ok && rawDeviceRe.MatchString(t) {
				a.addRisk(sdk.SeverityCritical, riskRawDisk, "dd writes straight onto the disk device "+t, ev)
			}
		}
	case "mke2fs", "wipefs", "fdisk", "sfdisk", "parted", "sgdisk", "diskutil":
		a.addRisk(sdk.SeverityCritical, riskFormat, base+" rewrites disks or partitions", ev)
	case "chmod", "chown", "chgrp":
		a.checkChmod(base, args, ev)
	case "cp", "mv", "install", "ln", "rsync":
		if len(args) > 0 && !strings.HasPrefix(args[len(args)-1], "-") {
			a.checkWrite(args[len(args)-1], base+" writes to", ev)
		}
		if base == "rsync" && strings.Contains(strings.Join(args, " "), ":") {
			a.network = append(a.network, ev)
		}
	case "tee", "truncate", "sed":
		if base == "sed" && !hasFlag(args, "-i") {
			break
		}
		for _, t := range args {
			if strings.HasPrefix(t, "/") {
				a.checkWrite(t, base+" writes to", ev)
			}
		}
	case "shutdown", "reboot", "halt", "poweroff":
		a.addRisk(sdk.SeverityHigh, riskShutdown, base+" stops or restarts the machine", ev)
	case "kill":
		if hasFlag(args, "-1") && (hasFlag(args, "-9") || hasFlag(args, "-KILL")) {
			a.addRisk(sdk.SeverityCritical, riskKillAll, "kill -9 -1 kills every process the user owns", ev)
		}
	case "su":
		a.addRisk(sdk.SeverityHigh, riskSudo, "runs su: the command asks for root on the host", ev)
		if i := indexOf(args, "-c"); i >= 0 && i+1 < len(args) {
			a.shellLine(args[i+1], ev, depth+1)
		}
	case "curl", "wget", "git", "scp", "sftp", "ssh", "ftp", "nc", "ncat", "telnet",
		"aws", "gsutil", "gcloud", "az", "huggingface-cli", "hf", "kaggle", "gdown", "aria2c":
		if base != "git" || len(args) > 0 && strings.Contains(" clone pull fetch push submodule lfs ", " "+args[0]+" ") {
			a.network = append(a.network, ev)
		}
	case "docker", "podman":
		a.checkDocker(args, ev)
	default:
		a.checkInstall(base, args, ev)
		if isShell(base) {
			if i := indexOf(args, "-c"); i >= 0 && i+1 < len(args) {
				a.shellLine(args[i+1], ev, depth+1)
			}
		}
		if isPython(base) {
			if i := indexOf(args, "-c"); i >= 0 && i+1 < len(args) {
				a.scanPython(pyStatements(args[i+1]), func(stmt) string { return ev })
			}
		}
	}
}

// checkInstall flags package installs at run time: they need the network
// and make the run depend on whatever the index serves today.
func (a *analysis) checkInstall(base string, args []string, ev string) {
	installs := false
	switch base {
	case "pip", "pip3", "conda", "mamba", "micromamba", "apt", "apt-get", "yum", "dnf",
		"apk", "brew", "gem", "cargo", "zypper", "pacman", "port":
		installs = len(args) > 0 && (indexOf(args, "install") >= 0 || indexOf(args, "-S") >= 0 || indexOf(args, "add") >= 0)
	case "uv":
		installs = indexOf(args, "pip") >= 0 && indexOf(args, "install") >= 0 || indexOf(args, "add") == 0
	case "npm", "yarn", "pnpm":
		installs = len(args) > 0 && (args[0] == "install" || args[0] == "i" || args[0] == "add")
	case "go":
		installs = len(args) > 0 && args[0] == "install"
	default:
		installs = isPython(base) && indexOf(args, "-m") >= 0 && indexOf(args, "pip") >= 0 && indexOf(args, "install") >= 0
	}
	if !installs {
		return
	}
	a.installs = append(a.installs, ev)
	a.network = append(a.network, ev)
	a.addRisk(sdk.SeverityMedium, riskInstall, "installs packages while running: needs the network and changes the environment; bake them into the image instead", ev)
}

func (a *analysis) checkDocker(args []string, ev string) {
	joined := " " + strings.Join(args, " ") + " "
	if strings.Contains(joined, " --privileged") || strings.Contains(joined, " -v /:") ||
		strings.Contains(joined, "/var/run/docker.sock") || strings.Contains(joined, "--pid=host") {
		a.addRisk(sdk.SeverityHigh, riskPrivileged, "starts a container with host-level access (privileged, host root or the Docker socket)", ev)
	}
	if len(args) > 0 && (args[0] == "pull" || args[0] == "run" || args[0] == "build") {
		a.network = append(a.network, ev)
	}
}

// checkRm classifies every target of an rm.
func (a *analysis) checkRm(base string, args []string, ev string) {
	recursive, targets, how := false, []string{}, base
	flags := true
	for _, w := range args {
		switch {
		case flags && w == "--":
			flags = false
		case flags && strings.HasPrefix(w, "--"):
			recursive = recursive || w == "--recursive" || w == "--no-preserve-root"
			how += " " + w
		case flags && strings.HasPrefix(w, "-") && len(w) > 1:
			recursive = recursive || strings.ContainsAny(w, "rR")
			how += " " + w
		default:
			targets = append(targets, w)
		}
	}
	for _, t := range targets {
		a.rmTarget(t, recursive, how, ev)
	}
}

// rmTarget reports the risk of deleting target; how names the deletion
// ("rm -rf", "shutil.rmtree").
func (a *analysis) rmTarget(t string, recursive bool, how, ev string) {
	class, p := classifyPath(t, a.in.Workdir)
	switch class {
	case pathRoot:
		a.addRisk(sdk.SeverityCritical, riskRmRoot, how+" deletes the filesystem root ("+t+")", ev)
	case pathHome:
		a.addRisk(sdk.SeverityCritical, riskRmHome, how+" deletes the home directory ("+t+")", ev)
	case pathSystem:
		sev := sdk.SeverityHigh
		if recursive && isSystemTop(p) {
			sev = sdk.SeverityCritical
		}
		a.addRisk(sev, riskRmSystem, how+" deletes the system path "+t, ev)
	case pathOutside:
		sev := sdk.SeverityMedium
		if recursive {
			sev = sdk.SeverityHigh
		}
		a.addRisk(sev, riskRmOutside, how+" deletes "+t+", outside the workspace", ev)
	case pathVariable:
		if recursive {
			a.addRisk(sdk.SeverityMedium, riskRmVariable, how+" deletes "+t+": if the variable is empty or unset this deletes from /", ev)
		}
	case pathWildcard:
		if recursive {
			a.addRisk(sdk.SeverityLow, riskRmWildcard, how+" "+t+" deletes everything in the working directory", ev)
		}
	}
}

func (a *analysis) checkChmod(base string, args []string, ev string) {
	recursive := hasFlag(args, "-R") || hasFlag(args, "--recursive")
	for _, t := range args {
		if strings.HasPrefix(t, "-") {
			continue
		}
		switch class, p := classifyPath(t, a.in.Workdir); class {
		case pathRoot, pathHome:
			a.addRisk(sdk.SeverityCritical, riskChmodSystem, base+" of "+t+" changes permissions across the machine", ev)
		case pathSystem:
			sev := sdk.SeverityHigh
			if recursive && isSystemTop(p) {
				sev = sdk.SeverityCritical
			}
			a.addRisk(sev, riskChmodSystem, base+" of the system path "+t, ev)
		}
	}
}

// checkWrite reports a write to a system path or a raw disk.
func (a *analysis) checkWrite(t, verb, ev string) {
	if benignDevice[t] || strings.HasPrefix(t, "/dev/fd/") {
		return
	}
	if rawDeviceRe.MatchString(t) {
		a.addRisk(sdk.SeverityCritical, riskRawDisk, verb+" the disk device "+t, ev)
		return
	}
	if class, _ := classifyPath(t, a.in.Workdir); class == pathSystem || class == pathRoot {
		a.addRisk(sdk.SeverityHigh, riskSystemWrite, verb+" the system path "+t, ev)
	}
}

func hasFlag(args []string, f string) bool { return indexOf(args, f) >= 0 }

func indexOf(args []string, w string) int {
	for i, a := range args {
		if a == w {
			return i
		}
	}
	return -1
}
