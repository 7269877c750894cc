// Package supervisor is the process that owns one process run, and must
// never lose a byte of it: the runbox binary re-executed as
// `runbox __supervise STATE_DIR` by package process (cmd/runbox hands the
// arguments after Arg to Main). What it and its starter agree on (argv,
// state-dir files, records, pipe messages) is in internal/protocol.
//
// The supervisor runs in its own session with stdin on /dev/null, so it
// outlives the daemon that started it, kill -9 included. It places
// assets, runs setup commands, starts the main command in its own process
// group, pumps stdout and stderr as raw chunks into the framed log (no
// line buffering: memory stays bounded whatever the output), enforces
// timeout, stop and memory limit on the whole tree, and finally writes the
// exit record. It says "ok" on its ready pipe once the first command has
// started, "exited RECORD" once the run's log is on disk (while the
// record's own file is still being synced), and "exited" instead when the
// record could not be said on one line.
//
// As a standby (`__supervise --standby`) it warms up, then waits for its
// run on a control pipe; when that run has ended it says "idle" and waits
// for the next, so back-to-back runs share one process. It serves a run
// only if the last one left nothing behind (no process, no pipe held
// open, no failed log write), at most maxServed runs, and exits when its
// starter closes the control pipe, which a daemon killed with -9 does too.
//
// On Linux the supervisor is a child subreaper: a grandchild that escapes
// the process group (setsid, double fork) is reparented to it, so it is
// still found (/proc/PID/task/TID/children), killed and reaped. The main
// command gets PR_SET_PDEATHSIG=SIGKILL: a run whose supervisor died is
// reported lost and must not go on unwatched. Only the supervisor's reaper
// waits for children (wait4(-1)); nothing calls exec.Cmd.Wait there.
//
// # Stop
//
// The supervisor treats SIGTERM and SIGINT as "cancel the run", never as
// "exit": SIGTERM to the process group and every other descendant, the
// grace (from stop.json, else the spec's), then SIGKILL until none is
// left. A SIGTERM that arrives late, meant for the run served before,
// finds stop.json in that run's directory, not this one's, and is ignored
// (noted in the log). Timeout does the same from inside the supervisor,
// so it holds with no daemon at all. When the main command exits on its
// own, processes it left behind get a short grace (at most 2s) and are
// killed, and the pipes are drained with a deadline so a stray holder of
// stdout cannot hang the run.
//
// # Memory limit
//
// With Limits.MemoryBytes the supervisor creates a memory cgroup below its
// own: cgroup v2 when the unified hierarchy has the memory controller and
// it can be enabled (children are then cloned straight into it), else the
// v1 memory controller (the child is moved in right after exec), with swap
// limited too. The kernel OOM killer then does the killing; its oom_kill
// counter marks Exit.OOMKilled. Where no cgroup is writable (not root, no
// delegation, macOS) an RSS watchdog sums the tree's RSS every 100ms
// (/proc/PID/stat on Linux, gopsutil on macOS) and SIGKILLs the tree above
// the limit. RSS double-counts pages shared between processes, so the
// watchdog errs on the side of killing.
//
// # Usage
//
// CPU time is the sum of the rusage wait4 reports for every process the
// supervisor reaped during the run, setup included (RUSAGE_CHILDREN, but
// for this run alone when the process serves several); peak RSS is the
// larger of the biggest single process (rusage maxrss) and the largest
// tree sample the watchdog took.
package supervisor
