package client

import "github.com/runbox/runbox/sandbox/runlog"

// The log and attach streams the daemon sends are in the run log's own
// framing; these re-export what a client needs to read them, so that
// clients import the API and its transport only.
type (
	// Stream numbers an output stream of a run.
	Stream = runlog.Stream
	// TextDecoder turns one stream's raw bytes into valid UTF-8 for
	// display, joining characters split across frames.
	TextDecoder = runlog.TextDecoder
)

// Output streams.
const (
	Stdout      = runlog.Stdout
	Stderr      = runlog.Stderr
	SetupStdout = runlog.SetupStdout
	SetupStderr = runlog.SetupStderr
	Meta        = runlog.Meta
)

// ParseStream reads a stream name (stdout, stderr, setup-stdout, ...).
var ParseStream = runlog.ParseStream
