// Package plugins runs runbox's WebAssembly plugins (ABI v1, docs/PLUGINS.md)
// with wazero: it loads the embedded built-ins and the user's modules,
// compiles each once per process through the on-disk compilation cache,
// keeps a small pool of instances per module, bounds every call (time,
// memory pages, input and output size) and switches off a plugin that keeps
// failing. A plugin never fails a run: errors are logged and skipped.
//
// Lifecycle: one Host per process (NewHost ... Close). A Host is safe for
// concurrent use. Per run, the engine calls Plan before starting, feeds the
// run's output lines to a Parser (NewParser) and, when the run ends
// unsuccessfully, calls Classify.
//
// Packaging lives next to it: Pack, Verify, Install, Remove and List manage
// bundles; Scaffold and RunFixtures help plugin authors.
package plugins
