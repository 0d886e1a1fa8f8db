#!/usr/bin/python3
"""Soak test of `perimeter serve`: a mixed load for N minutes with periodic `kill -9` and restarts on the
same store; fails on growth (memory, descriptors, latency, store bytes per event) and on any lost or
doubled event (docs/reliability.md, "Soak").

The load: devices posting locations (single updates, JSON arrays, NDJSON batches) and re-posting what was
not acknowledged after a crash; SSE clients reading /v1/events/stream that disconnect now and then and
resume with Last-Event-ID; a webhook whose receiver (a small HTTP server in this script) answers 500 to
part of the requests. Each device zigzags between the inside of its fence and a point outside every fence,
one update a second of its own clock, so each update it sends makes exactly one event (entry, exit,
entry, …): the log must hold exactly one event per update sent, whatever the crashes.

Usage:
  scripts/soak.py --binary .build/release/perimeter [--minutes 2] [--kill-every 40]

Python 3 standard library only. Exit status 0 when every check passed, 1 otherwise (the failures named).
"""

import argparse
import calendar
import hashlib
import hmac
import http.client
import http.server
import importlib.util
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

# The socket and /proc helpers of scripts/hostile-clients.py (connect, readable, request, usage).
_spec = importlib.util.spec_from_file_location(
    "hostile_clients", os.path.join(os.path.dirname(os.path.abspath(__file__)), "hostile-clients.py"))
hostile = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(hostile)

SECRET = "soak-webhook-secret-0123456789abcdef"
WEBHOOK_ID = "soak"
FENCES = 4
DEVICES_PER_POSTER = 4
BASE_TIME = int(time.time()) - 3 * 86400   # device clocks start three days ago: never "in the future"
WARM_UP = 10.0                              # seconds after each start whose samples do not count
RSS_GROWTH = (1.5, 24 << 20)                # late RSS ≤ early RSS × 1.5 + 24 MiB
FD_GROWTH = 16                              # late descriptors ≤ early + 16
P99_GROWTH = (3.0, 0.05)                    # late p99 ≤ max(early p99 × 3, early p99 + 50 ms)
STORE_BYTES_PER_EVENT = 4096                # store growth per logged event after warm-up

failures = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        failures.append(what)


def fence_feature(k):
    west, south = -110.0 + k, 44.0
    ring = [[west, south], [west + 0.5, south], [west + 0.5, south + 0.5], [west, south + 0.5], [west, south]]
    return json.dumps({"type": "Feature", "id": f"soak-{k}",
                       "properties": {"name": f"Soak {k}", "perimeter:group": "soak"},
                       "geometry": {"type": "Polygon", "coordinates": [ring]}}).encode()


class Server:
    """One `perimeter serve` on a store that outlives it; `crash()` is kill -9, `start()` restarts."""

    def __init__(self, binary, folder, extra):
        self.binary, self.folder, self.extra = binary, folder, extra
        self.db = os.path.join(folder, "soak.sqlite")
        self.port = 0
        self.process = None
        self.started_at = 0.0
        self.generation = 0
        self.up = threading.Event()

    def start(self):
        command = [self.binary, "serve", "--db", self.db, "--port", str(self.port), "--heartbeat", "2",
                   "--allow-private-webhooks"] + self.extra
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.process.stdout.readline()
        match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not match:
            self.process.kill()
            raise RuntimeError(f"the server did not start: {line.strip()}")
        self.port = int(match.group(1))
        # Keep reading its output so it never blocks on a full pipe.
        threading.Thread(target=lambda p=self.process: [None for _ in p.stdout], daemon=True).start()
        self.started_at = time.monotonic()
        self.generation += 1
        self.up.set()

    def crash(self):
        self.up.clear()
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        self.up.clear()
        if self.process and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()

    def store_bytes(self):
        return sum(os.path.getsize(self.db + suffix) for suffix in ("", "-wal")
                   if os.path.exists(self.db + suffix))


class Poster(threading.Thread):
    """Posts the updates of its devices, one request at a time, re-posting a request until it is
    acknowledged (a 200, or for a re-post a 422 because the update was stored before the crash)."""

    def __init__(self, number, server, stopping, latencies):
        super().__init__(daemon=True)
        self.number, self.server, self.stopping, self.latencies = number, server, stopping, latencies
        self.devices = [f"dev-{number}-{d}" for d in range(DEVICES_PER_POSTER)]
        self.step = {device: 0 for device in self.devices}
        self.sent = {device: [] for device in self.devices}   # update times, in order
        self.acked_event_ids = set()
        self.requests = self.reposts = self.errors = 0
        self.problems = []
        self.connection = None

    def update(self, device):
        index = self.step[device]
        self.step[device] += 1
        k = (self.number + self.devices.index(device)) % FENCES
        inside = index % 2 == 0
        latitude, longitude = (44.25, -110.0 + k + 0.25) if inside else (40.0, -100.0)
        seconds = BASE_TIME + index
        self.sent[device].append(seconds)
        return {"deviceId": device, "latitude": latitude, "longitude": longitude, "time": seconds}

    def next_request(self, kind):
        if kind == "single":
            return "application/json", json.dumps(self.update(random.choice(self.devices))).encode(), True
        updates = [self.update(device) for device in self.devices]
        if kind == "array":
            return "application/json", json.dumps(updates).encode(), False
        return "application/x-ndjson", "".join(json.dumps(u) + "\n" for u in updates).encode(), False

    def post(self, media, body):
        if self.connection is None:
            self.connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=15)
        started = time.monotonic()
        self.connection.request("POST", "/v1/locations", body, {"Content-Type": media})
        response = self.connection.getresponse()
        data = response.read()
        self.latencies.append((time.monotonic(), time.monotonic() - started))
        return response.status, data

    def run(self):
        kinds = ["single", "array", "ndjson"]
        while not self.stopping.is_set():
            media, body, single = self.next_request(kinds[self.requests % 3])
            self.requests += 1
            attempt = 0
            while True:
                self.server.up.wait()
                try:
                    status, data = self.post(media, body)
                except (OSError, http.client.HTTPException):
                    self.errors += 1
                    if self.connection:
                        self.connection.close()
                    self.connection = None
                    attempt += 1
                    time.sleep(0.2)
                    continue
                if status == 200:
                    answer = json.loads(data)
                    self.acked_event_ids.update(e["id"] for e in answer["events"])
                    for rejection in answer["rejected"]:
                        if not (attempt and rejection["code"] == "outOfOrderUpdate"):
                            self.problems.append(f"rejected {rejection}")
                    break
                if status == 422 and single and attempt and b"outOfOrderUpdate" in data:
                    break
                if status in (500, 503):
                    attempt += 1
                    time.sleep(0.2)
                    continue
                self.problems.append(f"{status} {data[:200]!r}")
                break
            self.reposts += attempt > 0
            self.stopping.wait(random.uniform(0.1, 0.25))
        if self.connection:
            self.connection.close()


class StreamClient(threading.Thread):
    """Reads /v1/events/stream from the start; hangs up now and then and resumes with Last-Event-ID."""

    def __init__(self, number, server, stopping):
        super().__init__(daemon=True)
        self.number, self.server, self.stopping = number, server, stopping
        self.seen = []            # (sequence, event id) in arrival order, across connections
        self.connections = 0
        self.done = threading.Event()
        self.target = None        # the last sequence to wait for once the load stops

    def last(self):
        return self.seen[-1][0] if self.seen else 0

    def run(self):
        while not self.done.is_set():
            self.server.up.wait()
            try:
                s = hostile.connect(self.server.port, timeout=10)
                s.sendall(f"GET /v1/events/stream HTTP/1.0\r\nLast-Event-ID: {self.last()}\r\n\r\n".encode())
                self.connections += 1
                hang_up_at = time.monotonic() + random.uniform(4, 15)
                buffer = b""
                while not self.done.is_set():
                    if not self.stopping.is_set() and time.monotonic() > hang_up_at:
                        break
                    if self.target is not None and self.last() >= self.target:
                        self.done.set()
                        break
                    if not hostile.readable(s, 0.2):
                        continue
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    buffer += chunk
                    while b"\n\n" in buffer:
                        frame, buffer = buffer.split(b"\n\n", 1)
                        sequence = event = None
                        for line in frame.split(b"\n"):
                            if line.startswith(b"id: "):
                                sequence = int(line[4:])
                            elif line.startswith(b"data: "):
                                event = json.loads(line[6:])
                        if sequence is not None and event is not None:
                            self.seen.append((sequence, event["id"]))
                s.close()
            except OSError:
                pass
            if not self.done.is_set():
                time.sleep(0.3)


class Receiver(http.server.BaseHTTPRequestHandler):
    """The webhook's endpoint; checks every signature. It answers 500 throughout an outage of 2 s in every
    15 s and to one request in 200 otherwise (one webhook is delivered one event at a time and a failure
    backs off for up to a second, so failing often at random would leave it behind any real load)."""

    protocol_version = "HTTP/1.1"
    outage = (15.0, 2.0)
    failure_rate = 0.005
    lock = threading.Lock()
    acknowledged = []     # (sequence, event id) of each 2xx answer
    bad_signatures = []
    failed = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        header = self.headers.get("Perimeter-Signature", "")
        parts = dict(p.split("=", 1) for p in header.split(",") if "=" in p)
        expected = hmac.new(SECRET.encode(), parts.get("t", "").encode() + b"." + body, hashlib.sha256).hexdigest()
        valid = "t" in parts and abs(time.time() - int(parts["t"])) <= 300 and \
            hmac.compare_digest(expected, parts.get("v1", ""))
        cloud_event = json.loads(body)
        with Receiver.lock:
            if not valid or self.headers.get("Idempotency-Key") != cloud_event["id"]:
                Receiver.bad_signatures.append(cloud_event["id"])
            fail = time.monotonic() % Receiver.outage[0] < Receiver.outage[1] or \
                random.random() < Receiver.failure_rate
            if fail:
                Receiver.failed += 1
            else:
                Receiver.acknowledged.append((cloud_event["data"]["sequence"], cloud_event["id"]))
        self.send_response(500 if fail else 204)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def handle(self):
        try:
            super().handle()
        except ConnectionResetError:
            pass   # the server was killed with the connection open

    def log_message(self, *arguments):
        pass


def read_log(port):
    events, after = [], 0
    while True:
        status, data = hostile.request(port, "GET", f"/v1/events?after={after}&limit=1000&properties=false")
        page = json.loads(data.partition(b"\r\n\r\n")[2])
        events += page["events"]
        if not page["events"]:
            return events
        after = page["events"][-1]["sequence"]


def p99(values):
    if not values:
        return 0.0
    values = sorted(values)
    return values[min(len(values) - 1, int(len(values) * 0.99))]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="the `perimeter` executable")
    parser.add_argument("--minutes", type=float, default=2.0)
    parser.add_argument("--kill-every", type=float, default=40.0, help="seconds between kill -9s")
    parser.add_argument("--posters", type=int, default=6)
    parser.add_argument("--streams", type=int, default=3)
    parser.add_argument("--sample-every", type=float, default=5.0)
    parser.add_argument("--serve-arg", action="append", default=[],
                        help="one more argument for `perimeter serve` (repeat it), e.g. --serve-arg=--commit-interval "
                             "--serve-arg=200: a timed group commit loses acknowledged updates at a kill, which this must see")
    arguments = parser.parse_args()
    duration = arguments.minutes * 60

    folder = tempfile.mkdtemp(prefix="perimeter-soak-")
    receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Receiver)
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    server = Server(arguments.binary, folder, arguments.serve_arg)
    stopping = threading.Event()
    latencies = []
    samples = []   # (elapsed, seconds since start, rss, descriptors, store bytes, events logged, p99)
    kills = 0
    started = time.monotonic()
    try:
        server.start()
        for k in range(FENCES):
            status, _ = hostile.request(server.port, "PUT", f"/v1/fences/soak-{k}", fence_feature(k),
                                        {"Content-Type": "application/json"})
            check(status in (200, 201), f"setup: fence soak-{k} stored ({status})")
        registration = json.dumps({"id": WEBHOOK_ID, "secret": SECRET,
                                   "url": f"http://127.0.0.1:{receiver.server_address[1]}/hook"}).encode()
        status, data = hostile.request(server.port, "POST", "/v1/webhooks", registration,
                                       {"Content-Type": "application/json"})
        check(status == 201, f"setup: webhook registered ({status})")

        posters = [Poster(n, server, stopping, latencies) for n in range(arguments.posters)]
        streams = [StreamClient(n, server, stopping) for n in range(arguments.streams)]
        for thread in posters + streams:
            thread.start()
        next_kill = started + arguments.kill_every
        next_sample = started + arguments.sample_every
        window_start = started
        while time.monotonic() - started < duration:
            time.sleep(0.2)
            now = time.monotonic()
            if now >= next_sample:
                rss, descriptors = hostile.usage(server.process.pid)
                window = [d for t, d in list(latencies) if window_start <= t < now]
                status, metrics = hostile.request(server.port, "GET", "/metrics")
                match = re.search(rb"^perimeter_events_logged (\d+)", metrics, re.M)
                logged = int(match.group(1)) if match else 0
                samples.append((now - started, now - server.started_at, rss, descriptors,
                                server.store_bytes(), logged, p99(window), len(window)))
                print(f"  {now - started:6.0f} s  rss {rss >> 20} MiB  fds {descriptors}  store "
                      f"{server.store_bytes() >> 10} KiB  events {logged}  p99 {p99(window) * 1000:.1f} ms "
                      f"({len(window)} requests)", flush=True)
                window_start = now
                next_sample = now + arguments.sample_every
            if now >= next_kill and duration - (now - started) > 15:
                server.crash()
                kills += 1
                print(f"  {now - started:6.0f} s  kill -9, restart", flush=True)
                server.start()
                window_start = time.monotonic()
                next_kill = time.monotonic() + arguments.kill_every
        stopping.set()
        for poster in posters:
            poster.join(timeout=60)
        check(all(not p.is_alive() for p in posters), "load: every poster finished")

        # Everything acknowledged; now read the log and let the streams and the webhook catch up.
        log = read_log(server.port)
        last = log[-1]["sequence"] if log else 0
        for stream in streams:
            stream.target = last
        deadline = time.monotonic() + 120
        delivered = set()
        while time.monotonic() < deadline:
            with Receiver.lock:
                delivered = {event_id for _, event_id in Receiver.acknowledged}
            if all(s.last() >= last for s in streams) and len(delivered) >= len(log):
                break
            time.sleep(0.5)
        for stream in streams:
            stream.done.set()
            stream.join(timeout=5)
        final_rss, final_descriptors = hostile.usage(server.process.pid)
        elapsed = time.monotonic() - started

        # Lost or doubled events.
        ids = [e["id"] for e in log]
        sequences = [e["sequence"] for e in log]
        check(len(set(ids)) == len(ids), f"log: {len(ids)} events, {len(ids) - len(set(ids))} doubled ids")
        check(sequences == sorted(set(sequences)), "log: sequences strictly increasing")
        acked = set().union(*(p.acked_event_ids for p in posters))
        missing = acked - set(ids)
        check(not missing, f"log: every acknowledged event is in /v1/events ({len(acked)} acknowledged, "
                           f"{len(missing)} missing: {sorted(missing)[:3]})")
        by_device = {}
        for event in log:
            by_device.setdefault(event["deviceId"], []).append(event)
        wrong = []
        updates = 0
        for poster in posters:
            for device, times in poster.sent.items():
                updates += len(times)
                events = by_device.get(device, [])
                expected = [(BASE_TIME + i, "entry" if i % 2 == 0 else "exit") for i in range(len(times))]
                got = [(int(round(_seconds(e["time"]))), e["type"]) for e in events]
                if got != expected:
                    wrong.append(f"{device}: {len(got)} events for {len(expected)} updates, first difference "
                                 f"at {next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))}")
        check(not wrong, f"log: exactly one event per update sent, in order ({updates} updates; {wrong[:3]})")
        problems = [x for p in posters for x in p.problems]
        check(not problems, f"load: no unexpected answers ({len(problems)}: {problems[:3]})")

        # SSE clients: every event, in order, once, across reconnections.
        expected_stream = [(e["sequence"], e["id"]) for e in log]
        for stream in streams:
            check(stream.seen == expected_stream,
                  f"stream {stream.number}: {len(stream.seen)} events over {stream.connections} connections "
                  f"= the log's {len(expected_stream)}, in order, once")

        # Webhook: every event at least once, valid signatures, each id once after de-duplication.
        with Receiver.lock:
            acknowledged = list(Receiver.acknowledged)
            bad = list(Receiver.bad_signatures)
            failed = Receiver.failed
        delivered = {event_id for _, event_id in acknowledged}
        check(not bad, f"webhook: every signature and Idempotency-Key valid ({len(bad)} bad)")
        check(delivered == set(ids), f"webhook: {len(delivered)} distinct ids acknowledged = the log's "
                                     f"{len(ids)} ({len(set(ids) - delivered)} missing, {len(delivered - set(ids))} unknown)")
        redelivered = len(acknowledged) - len(delivered)
        check(redelivered <= kills, f"webhook: {redelivered} acknowledged events sent again "
                                    f"(at most one per kill -9: {kills}); {failed} answered 500")

        # Growth after warm-up: the first and the last quarter of the run, leaving out each start's warm-up.
        steady = [s for s in samples if s[1] >= WARM_UP]
        early = [s for s in steady if s[0] <= max(duration / 4, WARM_UP + arguments.sample_every * 2)]
        late = [s for s in steady if s[0] >= duration * 3 / 4]
        rows = []
        if early and late:
            rss_early, rss_late = max(s[2] for s in early), max(s[2] for s in late)
            fd_early, fd_late = max(s[3] for s in early), max(s[3] for s in late)
            p99_early = sorted(s[6] for s in early)[len(early) // 2]
            p99_late = sorted(s[6] for s in late)[len(late) // 2]
            first, final = steady[0], steady[-1]
            per_event = (final[4] - first[4]) / max(1, final[5] - first[5])
            rss_bound = rss_early * RSS_GROWTH[0] + RSS_GROWTH[1]
            p99_bound = max(p99_early * P99_GROWTH[0], p99_early + P99_GROWTH[1])
            check(rss_late <= rss_bound, f"growth: resident memory {rss_early >> 20} → {rss_late >> 20} MiB "
                                         f"(bound {rss_bound / 2**20:.0f} MiB)")
            check(fd_late <= fd_early + FD_GROWTH, f"growth: descriptors {fd_early} → {fd_late} (bound {fd_early + FD_GROWTH})")
            check(p99_late <= p99_bound, f"growth: median window p99 {p99_early * 1000:.1f} → {p99_late * 1000:.1f} ms "
                                         f"(bound {p99_bound * 1000:.1f} ms)")
            check(per_event <= STORE_BYTES_PER_EVENT, f"growth: store {first[4] >> 10} → {final[4] >> 10} KiB, "
                                                      f"{per_event:.0f} bytes per event (bound {STORE_BYTES_PER_EVENT})")
            rows = [("resident memory (MiB)", rss_early >> 20, rss_late >> 20, final_rss >> 20),
                    ("open descriptors", fd_early, fd_late, final_descriptors),
                    ("request p99 (ms)", f"{p99_early * 1000:.1f}", f"{p99_late * 1000:.1f}", ""),
                    ("store (KiB)", first[4] >> 10, final[4] >> 10, f"{per_event:.0f} B/event")]
        else:
            check(False, "growth: too short a run to compare the first and the last quarter")

        print()
        print(f"soak: {elapsed / 60:.1f} min, {kills} kill -9, {sum(p.requests for p in posters)} requests "
              f"({sum(p.reposts for p in posters)} re-posted), {updates} updates, {len(log)} events, "
              f"{sum(s.connections for s in streams)} stream connections, {len(acknowledged)} webhook "
              f"acknowledgements + {failed} answered 500")
        print(f"| {'measure':<22} | {'early':>8} | {'late':>8} | {'end':>12} |")
        print(f"|{'-' * 24}|{'-' * 10}|{'-' * 10}|{'-' * 14}|")
        for name, a, b, c in rows:
            print(f"| {name:<22} | {a!s:>8} | {b!s:>8} | {c!s:>12} |")
    finally:
        stopping.set()
        server.stop()
        receiver.shutdown()
        shutil.rmtree(folder, ignore_errors=True)
    if failures:
        print(f"soak: FAILED ({len(failures)}):", *failures, sep="\n  ")
        return 1
    print("soak: passed")
    return 0


def _seconds(text):
    """Unix seconds of an RFC 3339 UTC time with milliseconds (the event JSON's `time`)."""
    main, _, fraction = text.rstrip("Z").partition(".")
    return calendar.timegm(time.strptime(main, "%Y-%m-%dT%H:%M:%S")) + float("0." + (fraction or "0"))


if __name__ == "__main__":
    sys.exit(main())
