#!/usr/bin/env python3
"""A webhook receiver for Perimeter's tests and benchmarks, independent of Perimeter's own code.

HTTP/1.1 with keep-alive, optionally over TLS (--cert/--key) and mutual TLS (--client-ca). Prints
{"port": N} on its first line once it listens, then one JSON line per request unless --quiet:
{"path", "headers" (lower-case names), "body" (base64), "peer" (client address:port, the same for
requests on one connection), "clientCertificate" (the client's subject CN, if any), "signatureValid"
(with --secret: whether Perimeter-Signature is HMAC-SHA256(secret, "<t>." + body))}.
Answers every POST with --status (default 204), or with the raw bytes of --raw-reply and a close.
Runs until killed.
"""
import argparse
import base64
import hashlib
import hmac
import json
import signal
import ssl
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(length)
        options = self.server.options
        if not options.quiet:
            self.server.record(self, body)
        if options.raw_reply is not None:
            self.wfile.write(options.raw_reply.encode())
            self.close_connection = True
            return
        self.send_response(options.status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format, *args):
        pass


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, options):
        super().__init__(("127.0.0.1", options.port), Handler)
        self.options = options
        self.lock = threading.Lock()

    def handle_error(self, request, client_address):
        pass  # refused handshakes and dropped connections are what some tests are about

    def record(self, handler, body):
        headers = {name.lower(): value for name, value in handler.headers.items()}
        line = {"path": handler.path, "headers": headers, "body": base64.b64encode(body).decode(),
                "peer": "%s:%d" % handler.client_address[:2]}
        if isinstance(handler.connection, ssl.SSLSocket):
            certificate = handler.connection.getpeercert()
            if certificate:
                subject = dict(item for group in certificate.get("subject", ()) for item in group)
                line["clientCertificate"] = subject.get("commonName")
        if self.options.secret is not None:
            parts = dict(p.split("=", 1) for p in headers.get("perimeter-signature", "").split(",") if "=" in p)
            t, mac = parts.get("t"), parts.get("v1")
            expected = hmac.new(self.options.secret.encode(), (t or "").encode() + b"." + body, hashlib.sha256).hexdigest()
            line["signatureValid"] = t is not None and mac is not None and hmac.compare_digest(expected, mac)
        with self.lock:
            sys.stdout.write(json.dumps(line) + "\n")
            sys.stdout.flush()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--cert", help="server certificate (PEM); with --key, serve https")
    parser.add_argument("--key", help="server private key (PEM)")
    parser.add_argument("--client-ca", help="demand a client certificate issued by this CA (PEM)")
    parser.add_argument("--status", type=int, default=204)
    parser.add_argument("--raw-reply", help="send these bytes instead of an HTTP response, then close")
    parser.add_argument("--secret", help="check each request's Perimeter-Signature with this secret")
    parser.add_argument("--quiet", action="store_true", help="print nothing per request (benchmarks)")
    options = parser.parse_args()
    # A parent may start us with signals blocked (threads of Swift's test runner do): be stoppable.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    server = Server(options)
    if options.cert:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(options.cert, options.key)
        if options.client_ca:
            context.verify_mode = ssl.CERT_REQUIRED
            context.load_verify_locations(options.client_ca)
        # The handshake happens in the request's thread, so a slow or refused one blocks nobody else.
        server.socket = context.wrap_socket(server.socket, server_side=True, do_handshake_on_connect=False)
    sys.stdout.write(json.dumps({"port": server.server_address[1]}) + "\n")
    sys.stdout.flush()
    server.serve_forever()


if __name__ == "__main__":
    main()
