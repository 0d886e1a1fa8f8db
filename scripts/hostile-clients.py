#!/usr/bin/python3
"""Replays a catalogue of hostile but honest clients against a real `perimeter serve` on loopback and
checks that the server stays healthy and bounded (docs/reliability.md, "Hostile clients").

Throughout the run a monitor asks GET /healthz every 0.2 s from 127.0.0.1 and records the slowest
answer; the attackers use other loopback addresses (127.0.0.2 …), as other clients would. Between
scenarios the server's resident memory and open descriptors are read from /proc.

Usage:
  scripts/hostile-clients.py [--binary .build/debug/perimeter]   start a server of its own (default)
  scripts/hostile-clients.py --port PORT --pid PID                 target a running server

Python 3 standard library only. Exit status 0 when every check passed, 1 otherwise.
"""

import argparse
import json
import os
import re
import resource
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

HEALTH_BOUND = 1.0          # seconds /healthz may take at worst during the run
RSS_BOUND = 400 << 20       # bytes of resident memory the server may reach
DEADLINE = 3                # --request-deadline given to a server this script starts
STREAM_BUFFER = 256 << 10   # --stream-buffer given to a server this script starts
PER_ADDRESS = 64            # --max-connections-per-address given to a server this script starts

failures = []
results = []


def check(condition, what):
    results.append(("ok  " if condition else "FAIL") + " " + what)
    if not condition:
        failures.append(what)
    print(results[-1], flush=True)


def connect(port, source="127.0.0.1", receive_buffer=None, timeout=5.0):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if receive_buffer:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
    s.bind((source, 0))
    s.settimeout(timeout)
    s.connect(("127.0.0.1", port))
    return s


def readable(s, seconds):
    """Whether `s` is readable (or closed) within `seconds` (poll: descriptors above 1023 are fine)."""
    poller = select.poll()
    poller.register(s, select.POLLIN)
    return bool(poller.poll(seconds * 1000))


def read_until_close(s, seconds):
    """Everything until the server closes (True) or `seconds` pass (False)."""
    data = b""
    end = time.monotonic() + seconds
    s.setblocking(False)
    while time.monotonic() < end:
        if not readable(s, 0.05):
            continue
        try:
            chunk = s.recv(65536)
        except (ConnectionResetError, BrokenPipeError):
            return data, True
        except BlockingIOError:
            continue
        if not chunk:
            return data, True
        data += chunk
    return data, False


def request(port, method, path, body=b"", headers=None, source="127.0.0.1"):
    s = connect(port, source)
    head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
    for name, value in (headers or {}).items():
        head += f"{name}: {value}\r\n"
    if body or method in ("POST", "PUT"):
        head += f"Content-Length: {len(body)}\r\n"
    s.sendall(head.encode() + b"\r\n" + body)
    data, _ = read_until_close(s, 30)
    s.close()
    status = int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0
    return status, data


class Monitor(threading.Thread):
    """Asks /healthz every 0.2 s; records the slowest answer and any failure."""

    def __init__(self, port):
        super().__init__(daemon=True)
        self.port = port
        self.slowest = 0.0
        self.errors = []
        self.count = 0
        self.stopping = threading.Event()

    def run(self):
        while not self.stopping.is_set():
            started = time.monotonic()
            try:
                s = connect(self.port, timeout=HEALTH_BOUND * 5)
                s.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                data, _ = read_until_close(s, HEALTH_BOUND * 5)
                s.close()
                if not data.startswith(b"HTTP/1.1 200"):
                    self.errors.append(f"/healthz answered {data[:40]!r}")
            except OSError as error:
                self.errors.append(f"/healthz failed: {error}")
            self.slowest = max(self.slowest, time.monotonic() - started)
            self.count += 1
            self.stopping.wait(0.2)


def usage(pid):
    rss = 0
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                rss = int(line.split()[1]) * 1024
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def problem_json(data):
    head, _, body = data.partition(b"\r\n\r\n")
    return b"application/problem+json" in head.lower() and body.startswith(b"{")


def framing(port):
    """Malformed requests: one answer each, problem+json where the server sees the request."""
    cases = [
        ("conflicting Content-Length", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n[]", 400, True),
        ("Content-Length with a sign", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: +2\r\n\r\n[]", 400, False),
        ("Content-Length and Transfer-Encoding", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n[]\r\n0\r\n\r\n", 400, True),
        ("unknown path", b"GET /nowhere HTTP/1.1\r\nHost: a\r\n\r\n", 404, True),
        ("32 KB path", b"GET /" + b"a" * 32000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", None, False),
        ("body too large", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: 99999999999\r\n\r\n", 413, True),
        ("negative Content-Length", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n", 400, False),
        ("Content-Length abc", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Length: abc\r\n\r\n", 400, False),
        ("16 KB path", b"GET /" + b"a" * 16000 + b" HTTP/1.1\r\nHost: a\r\n\r\n", 404, True),
        ("16 KB path, empty body", b"POST /" + b"a" * 16000 + b" HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n", 404, True),
        ("64 KB header", b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Big: " + b"b" * 65536 + b"\r\n\r\n", None, False),
        ("bad request line", b"GARBAGE\r\n\r\n", None, False),
        ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", None, False),
        ("no Host in HTTP/1.1", b"GET /healthz HTTP/1.1\r\n\r\n", 400, False),
        ("bad chunk size", b"POST /v1/locations HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", None, False),
        ("NUL in header", b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-A: \x00\r\n\r\n", None, False),
    ]
    # libmicrohttpd answers these itself before the server sees the request (docs/reliability.md).
    known = {"negative Content-Length", "Content-Length abc", "Content-Length with a sign"}
    for name, raw, status, must_be_problem in cases:
        s = connect(port, source="127.0.0.4")
        try:
            s.sendall(raw)
        except OSError:
            pass
        data, closed = read_until_close(s, DEADLINE + 3)
        s.close()
        answers = data.count(b"HTTP/1.1 ") + data.count(b"HTTP/1.0 ")
        first = data.split(b"\r\n", 1)[0].decode(errors="replace")
        kind = "problem+json" if problem_json(data) else ("no answer" if not data else "other body")
        if name in known:
            results.append(f"known framing: {name}: {answers} answer(s) from libmicrohttpd ({first!r}, {kind})")
            print(results[-1], flush=True)
            continue
        check(answers <= 1, f"framing: {name}: at most one answer ({answers}: {first!r}, {kind})")
        if status is not None and must_be_problem:
            check(first.startswith(f"HTTP/1.1 {status}") and problem_json(data),
                  f"framing: {name}: {status} problem+json ({first!r}, {kind})")
        else:
            results.append(f"note framing: {name}: {first!r}, {kind}")
            print(results[-1], flush=True)


def slowloris(port):
    """Ten connections each sending one header byte every 0.5 s: all cut near the deadline."""
    sockets = [connect(port, source="127.0.0.5") for _ in range(10)]
    for s in sockets:
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: a\r\nX-Slow: ")
        s.setblocking(False)
    started = time.monotonic()
    open_sockets = set(range(len(sockets)))
    closed_at = {}
    while open_sockets and time.monotonic() - started < DEADLINE + 10:
        time.sleep(0.5)
        for index in list(open_sockets):
            s = sockets[index]
            gone = False
            try:
                if readable(s, 0) and not s.recv(4096):
                    gone = True
                else:
                    s.send(b"x")
            except OSError:
                gone = True
            if gone:
                open_sockets.discard(index)
                closed_at[index] = time.monotonic() - started
    for s in sockets:
        s.close()
    latest = max(closed_at.values()) if closed_at else float("inf")
    check(not open_sockets and latest < DEADLINE + 2,
          f"slowloris: 10 byte-a-half-second senders cut by {latest:.1f} s (deadline {DEADLINE} s)")


def flood(port, count=2000):
    """`count` idle connections from one address within a fraction of a second."""
    sockets = []
    started = time.monotonic()
    for _ in range(count):
        try:
            sockets.append(connect(port, source="127.0.0.2", timeout=2))
        except OSError:
            pass
    took = time.monotonic() - started
    time.sleep(1.0)
    alive = 0
    for s in sockets:
        s.setblocking(False)
        try:
            if not readable(s, 0) or s.recv(1, socket.MSG_PEEK):
                alive += 1
        except OSError:
            pass
    status, _ = request(port, "GET", "/healthz", source="127.0.0.3")
    check(status == 200, f"flood: /healthz from another address answers during {len(sockets)} idle sockets opened in {took:.2f} s")
    check(alive <= PER_ADDRESS, f"flood: {alive} of them kept (per-address limit {PER_ADDRESS})")
    for s in sockets:
        s.close()


HEAVY_FENCE = json.dumps({
    "type": "Feature", "properties": {"name": "Box", "blob": "x" * 4000},
    "geometry": {"type": "Polygon", "coordinates": [[[-110.6, 44.5], [-110.4, 44.5], [-110.4, 44.7],
                                                     [-110.6, 44.7], [-110.6, 44.5]]]},
}).encode()


def zigzag(device, start, count):
    updates = []
    for i in range(start, start + count):
        seconds = 1_700_000_000 + i * 10
        updates.append({"deviceId": device, "latitude": 44.6 if i % 2 == 0 else 45.5, "longitude": -110.5,
                        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))})
    return json.dumps(updates).encode()


def stalled_streams(port, pid, clients=40, events=3000):
    """`clients` SSE clients that never read while ≈ 13 MB of events each are published."""
    status, _ = request(port, "PUT", "/v1/fences/heavy", HEAVY_FENCE, {"Content-Type": "application/json"})
    check(status in (200, 201), f"streams: heavy fence stored ({status})")
    stalled = []
    for _ in range(clients):
        s = connect(port, source="127.0.0.6", receive_buffer=4096)
        s.sendall(b"GET /v1/events/stream HTTP/1.0\r\n\r\n")
        stalled.append(s)
    time.sleep(0.5)
    before = usage(pid)[0] if pid else 0
    status, _ = request(port, "POST", "/v1/locations", zigzag("hostile-van", 0, events),
                        {"Content-Type": "application/json"})
    check(status == 200, f"streams: {events} events posted ({status})")
    peak = before
    deadline = time.monotonic() + 15
    closed = 0
    for s in stalled:
        remaining = max(0.1, deadline - time.monotonic())
        _, gone = read_until_close(s, remaining)
        closed += gone
        if pid:
            peak = max(peak, usage(pid)[0])
        s.close()
    check(closed == clients, f"streams: {closed} of {clients} non-reading clients disconnected")
    if pid:
        check(peak - before < 150 << 20,
              f"streams: memory grew {(peak - before) >> 20} MiB with {clients} stalled clients (unbounded: ≈ {clients * 12} MiB)")
    # A client resuming with Last-Event-ID gets the rest.
    s = connect(port, source="127.0.0.7")
    s.sendall(f"GET /v1/events/stream HTTP/1.0\r\nLast-Event-ID: {events - 5}\r\n\r\n".encode())
    data = b""
    end = time.monotonic() + 10
    while time.monotonic() < end and f"id: {events}\n".encode() not in data:
        if readable(s, 0.1):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    s.close()
    ids = [int(x) for x in re.findall(rb"^id: (\d+)$", data, re.M)]
    check(ids[-5:] == list(range(events - 4, events + 1)), f"streams: resume after {events - 5} gets the last five ({ids[-5:]})")


def start_server(binary):
    folder = tempfile.mkdtemp(prefix="perimeter-hostile-")
    command = [binary, "serve", "--db", os.path.join(folder, "hostile.sqlite"), "--port", "0", "--heartbeat", "1",
               "--request-deadline", str(DEADLINE), "--max-connections-per-address", str(PER_ADDRESS),
               "--stream-buffer", str(STREAM_BUFFER)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    line = process.stdout.readline()
    match = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
    if not match:
        process.kill()
        sys.exit(f"hostile-clients: the server did not start: {line.strip()}")
    return process, int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=".build/debug/perimeter")
    parser.add_argument("--port", type=int)
    parser.add_argument("--pid", type=int)
    arguments = parser.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 8192), hard))
    process = None
    if arguments.port:
        port, pid = arguments.port, arguments.pid
    else:
        process, port = start_server(arguments.binary)
        pid = process.pid
    started = time.monotonic()
    monitor = Monitor(port)
    monitor.start()
    try:
        baseline = usage(pid) if pid else None
        for scenario in (framing, slowloris, flood):
            scenario(port)
        stalled_streams(port, pid)
        time.sleep(DEADLINE + 1)
        monitor.stopping.set()
        monitor.join()
        check(not monitor.errors, f"health: /healthz always answered ({len(monitor.errors)} failures: {monitor.errors[:3]})")
        check(monitor.slowest < HEALTH_BOUND,
              f"health: slowest /healthz {monitor.slowest * 1000:.0f} ms over {monitor.count} probes (bound {HEALTH_BOUND * 1000:.0f} ms)")
        _, metrics = request(port, "GET", "/metrics")
        refused = dict(re.findall(rb'perimeter_http_connections_refused_total\{reason="(\w+)"\} (\d+)', metrics))
        check(int(refused.get(b"per_address", 0)) > 0 and int(refused.get(b"deadline", 0)) >= 10,
              f"metrics: perimeter_http_connections_refused_total {({k.decode(): int(v) for k, v in refused.items()})}")
        if pid:
            rss, descriptors = usage(pid)
            check(rss < RSS_BOUND, f"bounded: resident memory {rss >> 20} MiB at the end (bound {RSS_BOUND >> 20} MiB)")
            check(descriptors <= baseline[1] + 8,
                  f"bounded: {descriptors} open descriptors at the end ({baseline[1]} at the start)")
    finally:
        monitor.stopping.set()
        if process:
            process.terminate()
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
            shutil.rmtree(os.path.dirname(process.args[3]), ignore_errors=True)
    print(f"hostile-clients: {len(results)} lines, {len(failures)} failed, {time.monotonic() - started:.0f} s", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
