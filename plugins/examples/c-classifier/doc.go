// Package cclassifier holds the r-julia classifier, a runbox plugin
// written in C (src/*.c) and built with
// Debian's clang, lld and wasi-libc by its Makefile. It exists to show
// that ABI v1 (docs/PLUGINS.md) is language-neutral: no Go, no SDK, the
// exports and JSON written by hand. The package's tests build it and run
// it through the real plugin runtime; it has no Go code of its own.
package cclassifier
