# Perimeter — build, test, demo and benchmark entry points.
#
#   make demo    build and run the built-in demo (events on stdout, map in out/demo.svg)
#   make test    run every test (unit, conformance, end-to-end)
#   make deps    install the Debian packages the project needs (idempotent)
#   make build   release build of the `perimeter` command
#   make bench   benchmarks (release build; results under bench/results/)

SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
SWIFT ?= swift
BIN := .build/release/perimeter

.PHONY: deps build test demo bench bench-smoke clean

deps:
	@scripts/deps.sh

build:
	$(SWIFT) build -c release --product perimeter

test:
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: build
	@mkdir -p out
	$(BIN) demo --svg out/demo.svg

bench:
	$(SWIFT) build -c release --product perimeter-bench
	.build/release/perimeter-bench $(BENCH_ARGS)

bench-smoke:
	$(SWIFT) build -c release --product perimeter-bench
	.build/release/perimeter-bench --smoke

clean:
	rm -rf .build out
