# Perimeter — build, test, demo and benchmark entry points.
#
#   make demo    build and run the live demo: a server on 127.0.0.1:8080, a van driving through the demo
#                fences, events on stdout, the map page's URL printed; Ctrl-C stops (DEMO_ARGS adds options)
#   make demo-offline  the same drive replayed at once: events on stdout, map in out/demo.svg
#   make test    run every test (unit, conformance, end-to-end)
#   make deps    install the Debian packages the project needs (idempotent)
#   make server-test-deps  install schemathesis (PyPI) for the OpenAPI conformance test (skipped without it)
#   make build   release build of the `perimeter` command
#   make bench   benchmarks vs Shapely, PostGIS and the C yardstick (results under bench/results/)
#   make bench-smoke  every benchmark on a tiny workload, in seconds (CI)

SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
SWIFT ?= swift
BIN := .build/release/perimeter

.PHONY: deps server-test-deps build test demo demo-offline bench bench-deps bench-smoke clean

deps:
	@scripts/deps.sh

# Best effort: where pip cannot install (no pip, an externally managed Python), the test is skipped with a note.
server-test-deps:
	@command -v schemathesis >/dev/null || python3 -m pip install --quiet schemathesis \
		|| echo "server-test-deps: schemathesis could not be installed; its test will be skipped"

build:
	$(SWIFT) build -c release --product perimeter

test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The live demo (docs/server.md, "The live demo"), e.g. `make demo DEMO_ARGS="--port 0 --time-scale 100"`.
demo: build
	$(BIN) demo --serve $(DEMO_ARGS)

demo-offline: build
	@mkdir -p out
	$(BIN) demo --svg out/demo.svg

bench-deps:
	@bench/deps.sh

# Full benchmark (takes a while): peers included, results committed under bench/results/.
bench: bench-deps
	$(SWIFT) build -c release --product perimeter-bench
	$(SWIFT) build -c release --product perimeter
	taskset -c 1 .build/release/perimeter-bench $(BENCH_ARGS)

# Every benchmark on a tiny workload in seconds; peers that are not installed are skipped with a note.
# Exits non-zero when any two engines disagree.
bench-smoke:
	$(SWIFT) build -c release --product perimeter-bench
	$(SWIFT) build -c release --product perimeter
	$$(command -v taskset >/dev/null && echo taskset -c $$(( $$(nproc) > 1 ? 1 : 0 ))) .build/release/perimeter-bench --smoke --core $$(( $$(nproc) > 1 ? 1 : 0 ))

clean:
	rm -rf .build out
