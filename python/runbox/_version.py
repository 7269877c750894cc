"""The package's version. A wheel built by `make python-wheel` replaces this
file with the runbox binary's version (git describe, as the Makefile's
VERSION, in PEP 440 form); a source checkout says so."""

__version__ = "0+source"
BINARY_VERSION = "source"
