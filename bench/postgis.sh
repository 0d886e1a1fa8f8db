#!/usr/bin/env bash
# Starts or stops the benchmark's private PostgreSQL 15 + PostGIS cluster under WORK/pg (WORK: the
# benchmark's work folder, bench/work by default, as perimeter-bench --work), listening only on a Unix
# socket in WORK/pgsock and on 127.0.0.1:$BENCH_PG_PORT (default 54329), run as the `postgres` user
# (PostgreSQL refuses root), trust authentication (loopback only, throwaway data).
#   bench/postgis.sh start [CORE [WORK]]   # pins the server to CPU CORE (default 1); prints the port last
#   bench/postgis.sh stop [WORK]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
case "${1:-}" in
start) work="${3:-$here/work}" ;;
*) work="${2:-$here/work}" ;;
esac
mkdir -p "$work"; work="$(cd "$work" && pwd)"
data="$work/pg"; sock="$work/pgsock"; port="${BENCH_PG_PORT:-54329}"
bin=/usr/lib/postgresql/15/bin
as_pg() { if [[ $(id -un) == postgres ]]; then "$@"; else runuser -u postgres -- "$@"; fi; }

case "${1:-}" in
start)
    core="${2:-1}"
    mkdir -p "$data" "$sock"
    [[ $(id -u) -eq 0 ]] && chown postgres: "$data" "$sock"
    if [[ ! -f $data/PG_VERSION ]]; then
        as_pg "$bin/initdb" -D "$data" -U postgres --auth=trust -E UTF8 >"$work/pg-initdb.log" 2>&1
    fi
    as_pg "$bin/pg_ctl" -D "$data" status >/dev/null 2>&1 && as_pg "$bin/pg_ctl" -D "$data" -m fast stop >/dev/null
    as_pg taskset -c "$core" "$bin/pg_ctl" -D "$data" -l "$data/server.log" -w -t 60 \
        -o "-p $port -k $sock -c listen_addresses=127.0.0.1 -c max_parallel_workers_per_gather=0 -c jit=off -c shared_buffers=512MB -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
        start >/dev/null
    echo "$port"
    ;;
stop)
    [[ -f $data/PG_VERSION ]] && as_pg "$bin/pg_ctl" -D "$data" -m fast stop >/dev/null 2>&1 || true
    ;;
*)
    echo "usage: $0 start [CORE] | stop" >&2; exit 2 ;;
esac
