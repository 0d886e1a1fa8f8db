#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of Fuzz/ (docs/reliability.md, "Fuzzing").
#
#   Fuzz/fuzz.sh build               build the package's libraries with -sanitize=fuzzer,address into
#                                    .build-fuzz, then one executable per target in .build-fuzz/fuzz/bin
#   Fuzz/fuzz.sh run SECONDS [T...]  run each target (default: all) for SECONDS, one per core at a time,
#                                    at nice 19 (FUZZ_JOBS, FUZZ_NICE change that); `make fuzz SECONDS=N`
#   Fuzz/fuzz.sh totals              executions, CPU seconds and crashes per target and build so far
#
# FUZZ_ASAN=0 builds and runs a second set without AddressSanitizer (`-sanitize=fuzzer` only, in
# .build-fuzz-plain): Swift's own checks (bounds, overflow, unwrapping) still trap, unsafe-pointer misuse
# goes unseen, and inputs run two to four times faster. Both sets share one corpus.
#
# How it is built: SwiftPM compiles the library targets (release, with libFuzzer's coverage and ASan,
# and -enable-testing so a target may `@testable import` an internal type), in its own scratch folder
# so the normal build is untouched. Each target is then one `swiftc -parse-as-library` over its file
# (plus Request.swift for the request targets) linked with the libraries' object files.
#
# Inputs: the seeds committed in Fuzz/corpus/<target>, plus the small files of ../shared/fixtures
# gathered at run time when present; what libFuzzer learns goes to .build-fuzz/fuzz/corpus/<target>
# (kept between runs), crashes to .build-fuzz/fuzz/artifacts. Each run appends one line per target to
# .build-fuzz/fuzz/runs.tsv (date, target, seconds, executions, crashes, CPU seconds). Exit status: non-zero when a
# target found a crash (its reproducer is printed: `.build-fuzz/fuzz/bin/<target> <file>` replays it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$PATH:/opt/swift/usr/bin"
ASAN=${FUZZ_ASAN:-1}
if [[ $ASAN == 0 ]]; then
    SCRATCH=.build-fuzz-plain SANITIZE=-sanitize=fuzzer BUILD=plain
else
    SCRATCH=.build-fuzz SANITIZE=-sanitize=fuzzer,address BUILD=asan
fi
OUT=$SCRATCH/fuzz
# One corpus for both builds (what one learns, the other starts from), one log of runs.
CORPUS=.build-fuzz/fuzz/corpus
RUNS=.build-fuzz/fuzz/runs.tsv
TARGETS=(geojson rfc3339 tracks locations routes api)
# PerimeterServer and every module it depends on (Package.swift): their object files are linked whole.
MODULES=(PerimeterGeometry PerimeterGeoJSON PerimeterIndex PerimeterFences PerimeterEngine PerimeterTracks
         PerimeterService PerimeterSQLite PerimeterHTTP PerimeterHTTPClient PerimeterCrypto PerimeterWebhooks
         PerimeterServer)

build() {
    swift build -c release --scratch-path "$SCRATCH" -Xswiftc "$SANITIZE" -Xswiftc -enable-testing --target PerimeterServer
    local lib="$SCRATCH/release" objects=() module
    for module in "${MODULES[@]}"; do objects+=("$lib/$module.build"/*.o); done
    mkdir -p "$OUT/bin"
    local target extra
    for target in "${TARGETS[@]}"; do
        extra=()
        [[ $target == routes || $target == api ]] && extra=(Fuzz/Request.swift)
        # Skip the link when nothing it reads changed.
        if [[ -x $OUT/bin/$target && -z $(find "Fuzz/$target.swift" "${extra[@]}" "${objects[@]}" -newer "$OUT/bin/$target" | head -1) ]]; then
            continue
        fi
        echo "fuzz: building $target"
        swiftc "$SANITIZE" -parse-as-library -O -module-name "Fuzz_$target" \
            -I "$lib/Modules" -I Sources/CSQLite -I Sources/CMicroHTTPD -I Sources/CCurl -I Sources/CCrypto $(pkg-config --cflags-only-I libmicrohttpd sqlite3 libcurl libcrypto | sed 's/-I/-Xcc -I/g') \
            "Fuzz/$target.swift" "${extra[@]}" "${objects[@]}" -lsqlite3 -lmicrohttpd -lcurl -lcrypto -o "$OUT/bin/$target" \
            2> >(grep -v "Cannot export local symbol '__asan" >&2)  # gold's noise about ASan's local helpers
    done
}

# Small fixtures as seeds (the formats' real-world shapes); tracks get the format byte their target reads.
gather_seeds() {
    local fixtures=${PERIMETER_FIXTURES:-../shared/fixtures} file
    mkdir -p "$seeds"/{geojson,tracks}
    [[ -d $fixtures ]] || return 0
    while IFS= read -r file; do cp "$file" "$seeds/geojson/$(basename "$file")"; done \
        < <(find "$fixtures" -type f \( -name '*.geojson' -o -name '*.json' \) -size -8k)
    local format byte
    for format in gpx:0 nmea:1 csv:2 ndjson:3 geojson:4; do
        byte=${format#*:}
        while IFS= read -r file; do
            { printf "\\x0$byte"; head -c 8000 "$file"; } > "$seeds/tracks/${format%%:*}-$(basename "$file")"
        done < <(find "$fixtures/tracks" -type f -name "*.${format%%:*}" -size -64k)
    done
}

# One target for SECONDS: its line in runs.tsv (with the CPU seconds it used, so that its rate can be
# judged on a machine others share) and a summary line; non-zero when it found a crash.
run_one() {
    local target=$1 seconds=$2 log="$OUT/logs/$1.log" executions crashes=0 status cpu
    mkdir -p "$CORPUS/$target"
    local inputs=("Fuzz/corpus/$target")
    [[ -d $seeds/$target ]] && inputs+=("$seeds/$target")
    # -max_len bounds the inputs libFuzzer makes up (the seeds may be longer; below); -rss_limit_mb stays
    # under what a shared 2-core machine can give. LeakSanitizer: libFuzzer checks for a leak when an
    # input ends with more allocations than frees; not for api and routes (see Fuzz/api.swift).
    local leaks=1
    [[ $target == api || $target == routes || $ASAN == 0 ]] && leaks=0
    # What a target's inputs need: a timestamp is at most ≈ 40 bytes (64 digits of fraction still fit
    # in 128), a request target a path and a query; longer made-up inputs only cost time per execution.
    local max_len=4096
    [[ $target == rfc3339 ]] && max_len=128
    [[ $target == routes ]] && max_len=1024
    set +e
    # malloc_context_size=0: ASan records no stack per allocation (5–10 % of the time per input); a
    # report then lacks the allocation and free stacks, which replaying its input (below) prints.
    cpu=$( { TIMEFORMAT='%U %S'; time ASAN_OPTIONS="detect_leaks=$leaks:malloc_context_size=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
        nice -n "$NICE" "$OUT/bin/$target" -detect_leaks=$leaks -max_total_time="$seconds" -max_len=$max_len \
        -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/$target-" \
        "$CORPUS/$target" "${inputs[@]}" > "$log" 2>&1; } 2>&1 )
    status=$?
    set -e
    cpu=$(awk '{ printf "%.0f", $1 + $2 }' <<<"$cpu")
    executions=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
    if [[ $status != 0 ]]; then
        crashes=1
        echo "fuzz: $target FAILED (exit $status); log $log:" >&2
        grep -E 'ERROR|Fatal error|SUMMARY|Test unit written|artifact' "$log" | head -20 >&2
    fi
    mkdir -p "$(dirname "$RUNS")"
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$seconds" "${executions:-0}" "$crashes" "$cpu" "$BUILD" >> "$RUNS"
    echo "fuzz: $target ($BUILD): ${executions:-0} executions in $seconds s ($cpu s of CPU), corpus $(ls "$CORPUS/$target" | wc -l) inputs"
    return $crashes
}

# Every target (or those named) for SECONDS each, FUZZ_JOBS of them at a time (default: one per core),
# at `nice -n 19` (FUZZ_NICE): fuzzing takes only the CPU nothing else wants.
run() {
    local seconds=${1:?usage: fuzz.sh run SECONDS [target...]}; shift
    local targets=("${@:-${TARGETS[@]}}") target failed=0 jobs=${FUZZ_JOBS:-$(nproc)}
    NICE=${FUZZ_NICE:-19}
    # Seeds of this run only, so that runs of different targets may go on side by side.
    seeds=$OUT/seeds.$$
    trap 'rm -rf "$seeds"' EXIT
    gather_seeds
    mkdir -p "$OUT/artifacts" "$OUT/logs"
    for target in "${targets[@]}"; do
        while (( $(jobs -rp | wc -l) >= jobs )); do wait -n || failed=1; done
        run_one "$target" "$seconds" &
    done
    while (( $(jobs -rp | wc -l) > 0 )); do wait -n || failed=1; done
    return $failed
}

# Sums of runs.tsv per target and build (lines of older runs, without a build column, were ASan runs).
totals() {
    [[ -f $RUNS ]] || { echo "fuzz: no runs yet ($RUNS)"; return 0; }
    awk -F'\t' '{ b = ($7 == "" ? "asan" : $7); k = $2 "\t" b; e[k] += $4; c[k] += $6; x[k] += $5; t += $4 }
        END { printf "target\tbuild\texecutions\tCPU s\tper CPU s\tcrashes\n";
              for (k in e) printf "%s\t%d\t%d\t%.0f\t%d\n", k, e[k], c[k], (c[k] > 0 ? e[k] / c[k] : 0), x[k];
              printf "total\t\t%d\n", t }' "$RUNS"
}

case ${1:-} in
    build) build ;;
    run) shift; run "$@" ;;
    totals) totals ;;
    *) echo "usage: Fuzz/fuzz.sh build | run SECONDS [target...] | totals" >&2; exit 2 ;;
esac
