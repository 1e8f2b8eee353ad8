GO ?= go

.PHONY: test bench lint

# test runs every test with the race detector. Integration tests start their
# own redis-server on a free loopback port.
test:
	$(GO) test -race -count=1 ./...

# bench runs the Go benchmarks whose numbers are reported in BENCHMARKS.md.
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./...

# lint fails on unformatted files and go vet findings.
lint:
	@out=$$(gofmt -l . ); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
