// Package process runs a sandbox.Spec as a supervised host process. It is
// the daemon's side of the run; the process that owns it is the
// supervisor (package supervisor), and what the two agree on is in
// internal/protocol.
//
// # Start
//
// Start writes the spec into the run's state directory and re-executes
// the runbox binary as the supervisor (argv Options.Args + STATE_DIR;
// cmd/runbox hands those arguments to supervisor.Main), detached in a
// session of its own. Start returns once the supervisor reports on its
// ready pipe (fd 3) that the first command has started, so a fast command
// costs no polling anywhere: Start blocks on a pipe read. The supervisor
// says "exited RECORD" on the same pipe once the run's log is on disk:
// WaitEarly returns that record then, Wait once the file is in place
// ("idle", or the pipe's EOF as the supervisor exits). Without that
// message (the supervisor died) Wait goes by the supervisor's exit and
// the record on disk (cmd.Wait in Start's process, a pidfd after Recover);
// a supervisor gone without a record is a lost run.
//
// With Options.Standby a supervisor is started ahead of time and waits
// for its run on a control pipe (fd 4); when that run has ended it says
// "idle" and becomes the standby again (recycled), so back-to-back runs
// share one process and a short run pays for no process start (see
// standby.go).
//
// # Stop
//
// Stop works from any process, including a daemon that recovered the run:
// it writes stop.json (the grace) into the state directory and sends
// SIGTERM to the supervisor (checked against its recorded start time so a
// recycled pid is never signalled), which cancels the run. A supervisor
// that serves runs one after another must not cancel a run for a Stop
// meant for the one before: Stop signals only while the supervisor serves
// its run and no exit record exists.
package process
