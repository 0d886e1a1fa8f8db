# Perimeter — build, test, demo and benchmark entry points.
#
#   make demo    build and run the live demo: a server on 127.0.0.1:8080, a van driving through the demo
#                fences, events on stdout, the map page's URL printed; Ctrl-C stops (DEMO_ARGS adds options)
#   make demo-offline  the same drive replayed at once: events on stdout, map in out/demo.svg
#   make test    run every test (unit, conformance, end-to-end)
#   make deps    install what is missing: Debian packages, and the project's Python tools in .venv
#   make build   release build of the `perimeter` command
#   make bench   benchmarks vs Shapely, PostGIS and the C yardstick (results under bench/results/)
#   make bench-smoke  every benchmark on a tiny workload, in seconds (CI)
#   make hostile  hostile clients against a real `perimeter serve` (bad framing, slowloris, connection
#                floods, stalled event streams): healthy and bounded throughout, about a minute (CI)
#   make soak MINUTES=N  mixed load, SSE, a failing webhook receiver and kill -9 against a real server;
#                fails on growth or on any lost or doubled event (docs/reliability.md, "Soak")
#   make fuzz SECONDS=N  build every libFuzzer target of Fuzz/ and run each for N seconds
#   make test-asan / make test-tsan  the tests under AddressSanitizer / ThreadSanitizer (TEST_ARGS filters)
#
# Every target that builds runs `deps` first: on a fresh machine it installs, otherwise it prints one line.

SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
SWIFT ?= swift
BIN := .build/release/perimeter
# The tests and benchmarks find the project's Python tools (schemathesis, Shapely) here first.
export PATH := $(CURDIR)/.venv/bin:$(PATH)

.PHONY: deps check-architecture build test demo demo-offline cluster-demo bench bench-deps bench-smoke bench-shards hostile soak clean fuzz test-asan test-tsan

deps:
	@scripts/deps.sh

build: deps
	$(SWIFT) build -c release --product perimeter

# Every module imports only what docs/architecture.md allows (a second or so; part of make test).
check-architecture: deps
	@scripts/check-architecture.py

# The output is kept in .build/test-output.log; when the run fails, scripts/test-report.py prints at its
# end what failed or crashed and which tests were still running (a log's tail is often all one sees).
test: deps check-architecture
	$(SWIFT) build --build-tests
	@set -o pipefail; $(SWIFT) test --skip-build 2>&1 | tee .build/test-output.log \
		|| { status=$$?; scripts/test-report.py .build/test-output.log; exit $$status; }

# The live demo (docs/server.md, "The live demo"), e.g. `make demo DEMO_ARGS="--port 0 --time-scale 100"`.
demo: deps build
	$(BIN) demo --serve $(DEMO_ARGS)

# The demo on a local cluster (docs/cluster.md): 3 NATS servers (R3), 2 workers, 1 API node on loopback;
# prints the events and the map URL; Ctrl-C stops everything. E.g. `make cluster-demo DEMO_PORT=0`.
cluster-demo: deps build
	scripts/cluster-demo.sh $(BIN)

demo-offline: deps build
	@mkdir -p out
	$(BIN) demo --svg out/demo.svg

bench-deps: deps
	@bench/deps.sh

# Full benchmark (takes a while): peers included, results committed under bench/results/.
bench: deps bench-deps
	$(SWIFT) build -c release --product perimeter-bench
	$(SWIFT) build -c release --product perimeter
	taskset -c 1 .build/release/perimeter-bench $(BENCH_ARGS)

# docs/benchmarks.md, "Shards": batch throughput with 1 … nproc engine shards; not pinned (it needs the cores).
bench-shards: deps
	$(SWIFT) build -c release --product perimeter-bench
	.build/release/perimeter-bench --only shards $(BENCH_ARGS)

# Every benchmark on a tiny workload in seconds; PostGIS is skipped with a note unless `make bench-deps`
# installed it. Exits non-zero when any two engines disagree.
bench-smoke: deps
	$(SWIFT) build -c release --product perimeter-bench
	$(SWIFT) build -c release --product perimeter
	$$(command -v taskset >/dev/null && echo taskset -c $$(( $$(nproc) > 1 ? 1 : 0 ))) .build/release/perimeter-bench --smoke --core $$(( $$(nproc) > 1 ? 1 : 0 ))

# docs/reliability.md, "Hostile clients": Python 3's standard library only.
hostile: deps
	$(SWIFT) build --product perimeter
	/usr/bin/python3 scripts/hostile-clients.py --binary .build/debug/perimeter

# Fuzzing and sanitizers (docs/reliability.md): own scratch folders, so the normal build is untouched.
SECONDS ?= 60
fuzz: deps
	Fuzz/fuzz.sh build
	Fuzz/fuzz.sh run $(SECONDS)

# e.g. `make test-tsan TEST_ARGS="--filter PerimeterServiceTests"`; suppressions: scripts/sanitizers/.
# On a shared machine: `nice -n 19 make …`, and renice the test process (docs/reliability.md, "Sanitizers").
test-asan: deps
	$(SWIFT) build --build-tests --scratch-path .build-asan --sanitize=address
	LSAN_OPTIONS="suppressions=$(CURDIR)/scripts/sanitizers/lsan.supp" \
		$(SWIFT) test --skip-build --scratch-path .build-asan --sanitize=address $(TEST_ARGS)

test-tsan: deps
	$(SWIFT) build --build-tests --scratch-path .build-tsan --sanitize=thread
	TSAN_OPTIONS="halt_on_error=0 suppressions=$(CURDIR)/scripts/sanitizers/tsan.supp" \
		$(SWIFT) test --skip-build --scratch-path .build-tsan --sanitize=thread $(TEST_ARGS)

# docs/reliability.md, "Soak": Python 3's standard library only.
MINUTES ?= 2
soak: deps build
	/usr/bin/python3 scripts/soak.py --binary $(BIN) --minutes $(MINUTES) $(SOAK_ARGS)

clean:
	rm -rf .build out .build-fuzz .build-asan .build-tsan
