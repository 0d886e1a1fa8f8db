#!/usr/bin/env bash
# The demo on a local cluster (docs/cluster.md, "The demo on a local cluster"): three NATS servers
# (one JetStream cluster, every stream and bucket R3), two workers, one API node, all on 127.0.0.1.
# Loads the demo's fences through the API node, drives the demo van through its simulation API, prints
# the events as the API node reports them and the map URL; Ctrl-C (or any exit) stops everything.
#
# Usage: scripts/cluster-demo.sh [PERIMETER_BINARY]   (default .build/release/perimeter)
# Environment: DEMO_PORT (API node, default 8080; 0 picks a free one), DEMO_TIME_SCALE (default 25),
#              DEMO_EXIT_AFTER (seconds, default: run until Ctrl-C), DEMO_WORKERS (default 2).
set -euo pipefail

BIN=${1:-.build/release/perimeter}
PORT=${DEMO_PORT:-8080}
SCALE=${DEMO_TIME_SCALE:-25}
WORKERS=${DEMO_WORKERS:-2}
NATS=${NATS_SERVER:-$(command -v nats-server || true)}
[ -x "$BIN" ] || { echo "cluster-demo: $BIN is not built (make build)" >&2; exit 1; }
[ -n "$NATS" ] || { echo "cluster-demo: nats-server is not installed (make deps)" >&2; exit 1; }
command -v curl >/dev/null || { echo "cluster-demo: curl is needed" >&2; exit 1; }

WORK=$(mktemp -d /tmp/perimeter-cluster-demo.XXXXXX)
PIDS=()
stop_all() {
    trap - EXIT INT TERM
    # The API node and the workers first (they stop gracefully on SIGTERM), then the NATS servers.
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${PIDS[@]}"; do wait "$pid" 2>/dev/null || true; done
    rm -rf "$WORK"
    echo "cluster-demo: stopped everything" >&2
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# A free TCP port on 127.0.0.1 (the kernel picks; a race with another program is unlikely here).
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'; }

CLIENT=() ROUTE=() URLS=()
for i in 1 2 3; do CLIENT[$i]=$(free_port); ROUTE[$i]=$(free_port); done
for i in 1 2 3; do URLS+=("nats://127.0.0.1:${CLIENT[$i]}"); done
NATS_URLS=$(IFS=,; echo "${URLS[*]}")
for i in 1 2 3; do
    mkdir -p "$WORK/n$i"
    cat > "$WORK/n$i/server.conf" <<CONF
server_name: n$i
listen: 127.0.0.1:${CLIENT[$i]}
jetstream { store_dir: "$WORK/n$i/store", max_memory_store: 256MB, max_file_store: 1GB }
cluster {
    name: perimeter-demo
    listen: 127.0.0.1:${ROUTE[$i]}
    routes: [nats-route://127.0.0.1:${ROUTE[1]}, nats-route://127.0.0.1:${ROUTE[2]}, nats-route://127.0.0.1:${ROUTE[3]}]
}
CONF
    "$NATS" -c "$WORK/n$i/server.conf" -l "$WORK/n$i/server.log" & PIDS+=($!)
done
wait_for() {  # FILE TEXT SECONDS WHAT
    local deadline=$((SECONDS + $3))
    until grep -q "$2" "$1" 2>/dev/null; do
        [ $SECONDS -lt $deadline ] || { echo "cluster-demo: $4 not ready in $3 s; its log:" >&2; cat "$1" >&2 || true; exit 1; }
        sleep 0.2
    done
}
for i in 1 2 3; do wait_for "$WORK/n$i/server.log" "Server is ready" 30 "nats-server n$i"; done
echo "cluster-demo: NATS cluster of 3 at $NATS_URLS" >&2

CLUSTER_FLAGS=(--nats "$NATS_URLS" --replicas 3 --partitions 64 --lease 10 --prefix perimeter)
# JetStream elects its meta leader a few seconds after the servers are ready: until then the API node
# cannot create the streams and exits; start it again.
for attempt in $(seq 1 15); do
    "$BIN" serve "${CLUSTER_FLAGS[@]}" --port "$PORT" > "$WORK/api.log" 2>&1 & API_PID=$!
    until grep -q "perimeter: serving" "$WORK/api.log" || ! kill -0 $API_PID 2>/dev/null; do sleep 0.2; done
    if kill -0 $API_PID 2>/dev/null; then break; fi
    [ "$attempt" -lt 15 ] || { echo "cluster-demo: the API node did not start:" >&2; cat "$WORK/api.log" >&2; exit 1; }
    sleep 1
done
PIDS+=($API_PID)
PORT=$(grep -o 'serving http://127.0.0.1:[0-9]*' "$WORK/api.log" | sed 's/.*://')
WORKER_PIDS=()
for w in $(seq 1 "$WORKERS"); do
    "$BIN" worker "${CLUSTER_FLAGS[@]}" > "$WORK/worker-$w.log" 2>&1 & WORKER_PIDS+=($!); PIDS+=($!)
done
sleep 1
for w in $(seq 1 "$WORKERS"); do
    kill -0 "${WORKER_PIDS[$((w - 1))]}" 2>/dev/null || { echo "cluster-demo: worker-$w exited:" >&2; cat "$WORK/worker-$w.log" >&2; exit 1; }
done
echo "cluster-demo: $WORKERS workers and 1 API node running" >&2

API="http://127.0.0.1:$PORT"
"$BIN" demo --export "$WORK/demo" > /dev/null
post() {  # PATH FILE WHAT
    local status
    status=$(curl -s -o "$WORK/answer.json" -w '%{http_code}' -X POST -H 'Content-Type: application/json' --data-binary "@$2" "$API$1")
    case "$status" in 2??) ;; *) echo "cluster-demo: the API node refused $3 ($status):" >&2; cat "$WORK/answer.json" >&2; echo >&2; exit 1 ;; esac
}
post /v1/fences "$WORK/demo/demo-fences.geojson" "the demo's fences"
# The workers apply fence changes at their partitions' next tick (a quarter second).
sleep 1

# The events, as the API node reports them (from the cluster's events stream).
cat > "$WORK/print-events.py" <<'PY'
import json, sys
for line in sys.stdin:
    if line.startswith("data: "):
        e = json.loads(line[6:])
        if "fenceId" in e:
            fence = e.get("fenceName") or e["fenceId"]
            print(f"{e['time']}  {e['type']:<6} {fence:<28} {e['deviceId']}  (event {e['sequence']})", flush=True)
PY
curl -sN "$API/v1/events/stream" | python3 -u "$WORK/print-events.py" & PIDS+=($!)

python3 - "$WORK/demo/demo-route.geojson" "$SCALE" > "$WORK/drive.json" <<'PY'
import json, sys
route = json.load(open(sys.argv[1]))
print(json.dumps({"deviceId": "van-7", "path": route, "speed": 12, "interval": 1, "timeScale": float(sys.argv[2])}))
PY
post /v1/simulations "$WORK/drive.json" "the drive"
echo "cluster-demo: the van drives (time scale $SCALE). Map: $API/   Events: $API/v1/events   Ctrl-C stops everything." >&2

if [ -n "${DEMO_EXIT_AFTER:-}" ]; then sleep "$DEMO_EXIT_AFTER"; else while true; do sleep 3600; done; fi
