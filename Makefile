# runbox — set-up is two commands: `make demo` and `make test`.
GO       ?= go
BIN      := bin/runbox
VERSION  := $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -s -w -X github.com/runbox/runbox/cmd/internal/cli.Version=$(VERSION)
# A static binary: the same file runs on any Linux box and inside containers.
export CGO_ENABLED := 0

.PHONY: all build install test demo lint bench chaos eval clean python-wheel test-python

all: build

include plugins/builtin/Makefile.inc
include clients/ui/Makefile.inc
include plugins/examples/Makefile.inc

## build: bin/runbox (the thin client you run) and bin/runboxd (daemon,
## analyze, plugins; the default plugins embedded)
build: $(BUILTIN_WASM)
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o bin/ ./cmd/runbox ./cmd/runboxd

## install: put runbox and runboxd in $(PREFIX)/bin (default ~/.local/bin)
PREFIX ?= $(HOME)/.local
install: build
	install -d $(PREFIX)/bin
	install -m 0755 bin/runbox bin/runboxd $(PREFIX)/bin/
	@echo "installed runbox and runboxd in $(PREFIX)/bin"
	@case ":$$PATH:" in *":$(PREFIX)/bin:"*) ;; *) echo "$(PREFIX)/bin is not on your PATH: add it, e.g. export PATH=\"$(PREFIX)/bin:\$$PATH\"";; esac

## test: build, vet and run every test (Docker tests skip without a daemon
## unless RUNBOX_REQUIRE_DOCKER=1)
test: build
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...  # macOS builds (the process sandbox refuses what it cannot enforce there)
	$(GO) test -count=1 -timeout 30m ./...
	$(MAKE) --no-print-directory test-python

## python-wheel: bin/runbox-VERSION-py3-none-any.whl, the Python package
## (standard library only, built without pip or an index; install it with
## `pip install bin/runbox-*.whl`); its version is the binary's
python-wheel:
	python3 python/build_wheel.py --binary-version '$(VERSION)' --out bin

## test-python: the Python package's tests (unittest) against a real daemon
test-python: build
	cd python && python3 -m unittest discover -s tests -v

## demo: build and run a real example job, with live progress, then a
## failing one that runbox classifies
demo: demo-deps build
	@echo "== runbox backends"
	@$(BIN) backends
	@echo
	@echo "== a training job: progress is parsed live from its output"
	$(BIN) run --name demo-train -- python3 examples/train.py --epochs 3
	@echo
	@echo "== the same job with a learning rate that makes the loss diverge"
	@$(BIN) run --name demo-diverge -- python3 examples/train.py --epochs 3 --lr 500 || echo "(it failed, as it should: runbox says why below)"
	@echo
	@echo "== why did it fail, and what now? (@last is the newest run)"
	$(BIN) status @last
	@echo
	$(BIN) ls -n 5

# demo-deps says, before the first build, that Go fetches the modules once
# (a minute or more of "go: downloading" lines); only when the module cache
# lacks them: go list cannot fetch with GOPROXY=off.
.PHONY: demo-deps
demo-deps:
	@GOPROXY=off $(GO) list -deps ./cmd/runbox ./cmd/runboxd >/dev/null 2>&1 || \
		echo "== first build: Go fetches runbox's dependencies once (the 'go: downloading' lines below); later builds reuse them"

## chaos: provoke every fault runbox promises to survive (each TestFault*
## test, CHAOS_TRIES times) and print a table: fault, tries, outcome
chaos: build
	$(GO) run ./internal/chaostable -tries $(or $(CHAOS_TRIES),3)

## eval: failure codes and progress states on the real-output corpus
## (plugins/builtin/testdata/corpus), per code, framework and split
eval: build
	RUNBOX_PLUGINS=$$(mktemp -d) $(BIN) analyze --corpus plugins/builtin/testdata/corpus

## lint: formatting, vet and staticcheck
lint:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) vet ./...
	GOOS=darwin $(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@latest ./...

## bench: micro-benchmarks plus the side-by-side scripts; see BENCHMARKS.md
bench: build
	$(GO) test -run '^$$' -bench . -benchmem ./...
	./bench/run.sh

clean:
	rm -rf bin
