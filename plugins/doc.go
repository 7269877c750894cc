// Package plugins runs runbox's WebAssembly plugins (ABI v1, docs/PLUGINS.md)
// with wazero: it loads the built-ins its caller hands it (Config.Builtins;
// it imports none) and the user's modules and installed bundles,
// compiles each once per process through the on-disk compilation cache,
// keeps a small pool of instances per module, bounds every load (compile,
// _initialize, describe: LoadTimeout) and every call (time, memory pages,
// input and output size) and switches off a plugin that keeps failing. A
// plugin never fails a run: errors are logged and skipped. Plugins are
// independent: each is asked (and each progress plugin fed) on its own, so
// one that hangs, traps or is still loading withholds no other's answer.
//
// Lifecycle: one Host per process (NewHost ... Close). A Host is safe for
// concurrent use. Per run, the engine calls Plan before starting, feeds the
// run's output lines to a Parser (NewParser) and, when the run ends
// unsuccessfully, calls Classify.
//
// Beside it: plugins/bundle manages bundles (pack, verify, install),
// plugins/authoring helps plugin authors (scaffold, fixtures),
// plugins/analyze explains a log (runbox analyze), plugins/prefilter is the
// host-side line filter and plugins/builtin holds the default plugins.
package plugins
