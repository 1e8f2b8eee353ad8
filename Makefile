GO ?= go

.PHONY: test bench soak lint modules generate run

# MODULES are the repository's Go modules: the core (.), the config-only
# path (etl, config, cli, cmd/agora), the dashboard (fleet/ui), the examples,
# and two kept for tests (internal/pgtest, internal/peerbench). go.work ties
# them for development: every target below runs in the workspace, over
# every module's packages in one go command (as fast as one module), and
# `make modules` builds each with its own go.mod (GOWORK=off), as its users
# do. docs/modules.md says why.
MODULES := . etl config fleet/ui cli cmd/agora examples internal/pgtest internal/peerbench
PKGS := $(foreach m,$(MODULES),$(if $(filter .,$(m)),./...,./$(m)/...))

# test runs every test with the race detector (integration tests start their
# own redis-server on a free loopback port), the worker entry's tests again
# as built without the OTLP exporter, then fuzzes the agora/v1 parser
# from the bad-file corpus (config/testdata/bad): no input may panic, every
# diagnostic has file:line:col. The budget is a count of inputs, not a
# duration: with a duration, Go 1.26's fuzz coordinator can report its own
# deadline as a failure when a worker is mid-input as time runs out
# (go.dev/issue/75804, fixed in Go 1.27). Minimizing a new input is held to
# 200 runs, or the run spends most of itself minimizing.
FUZZTIME ?= 5000x
# FuzzTransformChains runs random records through random transform chains
# into the file and SQLite sinks (accounting and value fidelity); each
# input is a whole pipeline run, hence its smaller budget.
FUZZTIME_TRANSFORMS ?= 2000x
test:
	$(GO) test -race -count=1 $(PKGS)
	$(GO) test -race -count=1 -tags agora_nootlp ./worker
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) -fuzzminimizetime=200x ./config
	$(GO) test -run='^$$' -fuzz='^FuzzTransformChains$$' -fuzztime=$(FUZZTIME_TRANSFORMS) -fuzzminimizetime=200x ./etl/transform

# bench runs the Go benchmarks whose numbers are reported in BENCHMARKS.md.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem $(PKGS)

# soak runs the fault tests' long versions: fleets of replicas under SIGKILL,
# SIGSTOP and empty Redis restarts, 60 s per run, AGORA_SOAK_RUNS runs each
# (default 10). make test skips them.
soak:
	AGORA_SOAK=1 $(GO) test -race -count=1 -run 'Soak' -timeout 30m ./cli/ ./runtime/distributed/

# lint fails on unformatted files, go vet and staticcheck findings, stale
# generated files and invalid example config files. staticcheck runs at a
# pinned version through the module proxy (its default checks; a finding
# kept on purpose carries a //lint:ignore with its reason).
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
lint: modules
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)
	$(GO) run $(STATICCHECK) $(PKGS)
	$(GO) run ./cmd/agoragen -check ./examples/...
	$(GO) run ./cmd/agora check --config examples/config-only/pipelines.toml
	$(GO) run ./cmd/agora check --config examples/config-only/files.toml

# modules checks each module with its own go.mod, outside the workspace:
# go.mod and go.sum are tidy and every package and test compiles (go vet).
# The modules other than cmd/agora reach their siblings through replace
# directives to this checkout, which their users' builds ignore. cmd/agora
# has none, so that go install github.com/agora-etl/agora/cmd/agora@latest
# accepts it; it is checked in the workspace, and internal/workspace's test checks
# it has no replace directive.
modules:
	@set -e; for m in $(filter-out cmd/agora,$(MODULES)); do \
		echo "module $$m"; \
		(cd $$m && GOWORK=off $(GO) mod tidy -diff && GOWORK=off $(GO) vet ./...); \
	done
	$(GO) vet ./cmd/agora/...

# generate runs go generate: agoragen rewrites the examples' worker.go.
generate:
	@echo "go generate: agoragen rewrites the examples' worker.go (a first run compiles agoragen)"
	$(GO) generate $(PKGS)

# run generates, builds the example worker and runs three replicas against a
# Redis on a loopback port (redis-server when installed, otherwise an
# in-process miniredis) for about 30 seconds, printing which replica ran each
# slot with which fencing token. Ctrl+C stops it earlier. The demo and the
# worker are built first, step by step with go build -v listing each package
# it compiles: a first build compiles every dependency and takes minutes.
RUNBIN ?= bin
run: generate
	@echo "make run: 1/3 building the demo (go build -v lists each package compiled; a first build takes a few minutes)"
	$(GO) build -v -o $(RUNBIN)/demo ./examples/etl/cmd/demo
	@echo "make run: 2/3 building the example worker"
	$(GO) build -v -o $(RUNBIN)/etl-worker ./examples/etl/cmd/etl-worker
	@echo "make run: 3/3 starting three replicas"
	$(RUNBIN)/demo -worker $(RUNBIN)/etl-worker
