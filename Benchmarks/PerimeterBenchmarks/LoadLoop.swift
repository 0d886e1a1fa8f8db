import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One client thread of ``HTTPLoadGenerator``: an `epoll` loop over its share of the connections
/// (non-blocking keep-alive sockets), each sending its prepared requests one at a time, in order.
///
/// Per request: one `send` of the request's prepared bytes (continued on `EPOLLOUT` after a partial
/// write), `recv` into the connection's reused buffer until ``HTTPResponseParser`` frames the answer,
/// the answer's check, its latency into a ``LatencyHistogram``, and the next request. Nothing is
/// allocated per request (failure descriptions aside). A request unanswered after `timeout` seconds, a
/// closed connection, or bytes the parser cannot frame fail the connection with a description; the
/// loop ends when every connection has finished (its list sent, the deadline passed, or failed).
final class LoadLoop {
    /// One connection's requests, prepared: their bytes back to back, where each ends, and the updates
    /// each must have accepted (-1: only a 200 is checked).
    struct Plan {
        /// Every request's bytes, in order.
        var bytes: [UInt8] = []
        /// `ends[i]`: the offset just past request *i* (it starts at `ends[i - 1]`, or 0).
        var ends: [Int] = []
        /// `expected[i]`: the `"accepted"` count request *i* must get, or -1.
        var expected: [Int32] = []

        /// Appends one request.
        mutating func append(_ request: HTTPLoadGenerator.Request) {
            bytes += request.bytes
            ends.append(bytes.count)
            expected.append(request.expectedAccepted.map { Int32(clamping: $0) } ?? -1)
        }
    }

    /// A connection's state; touched only by its loop's thread.
    final class Connection {
        let descriptor: Int32
        let plan: Plan
        /// The connection's index in the loop (its epoll token).
        let token: Int
        /// Bytes of the current request.
        var length = 0
        /// Request in flight (or next to send).
        var current = 0
        /// Bytes of the current request written so far.
        var written = 0
        var inFlight = false
        /// Whether `EPOLLOUT` is being watched (after a partial write).
        var waitingToWrite = false
        var sentAt: UInt64 = 0
        var responses = 0
        var finished = false
        /// Read buffer: `filled` bytes of the response being read.
        var buffer: UnsafeMutableRawBufferPointer
        var filled = 0
        var parser = HTTPResponseParser()

        init(descriptor: Int32, plan: Plan, token: Int) {
            self.descriptor = descriptor
            self.plan = plan
            self.token = token
            buffer = .allocate(byteCount: 65_536, alignment: 8)
        }

        deinit { buffer.deallocate() }
    }

    private let connections: [Connection]
    private let epoll: Epoll
    private let deadline: UInt64
    private let timeout: UInt64
    private let cycle: Bool
    private var active = 0
    /// What this loop did (seconds not set: the caller measures the wall time).
    private(set) var outcome = HTTPLoadGenerator.Outcome()
    /// When the last connection finished (monotonic nanoseconds).
    private(set) var lastEnd: UInt64 = 0

    /// A loop over `connections` (connected, non-blocking descriptors, with their plans; the caller closes
    /// them after the run, so a finished connection stays open, idle, until every loop is done);
    /// no request starts at or after `deadline` (monotonic nanoseconds); a request fails after `timeout`
    /// seconds; with `cycle`, each connection starts its list over until the deadline.
    init(connections: [(descriptor: Int32, plan: Plan)], deadline: UInt64, timeout: Double, cycle: Bool) throws(Epoll.Failure) {
        epoll = try Epoll(capacity: max(1, connections.count))
        self.connections = connections.enumerated().map { Connection(descriptor: $1.descriptor, plan: $1.plan, token: $0) }
        self.deadline = deadline
        self.timeout = UInt64(max(0.001, timeout) * 1e9)
        self.cycle = cycle
        for connection in self.connections {
            try epoll.watch(connection.descriptor, for: Epoll.readable, token: connection.token)
        }
    }

    /// Monotonic nanoseconds.
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
    }

    /// Runs until every connection has finished.
    func run() {
        active = connections.count
        var now = Self.now()
        for connection in connections { startNext(connection, now: now) }
        var nextTimeoutCheck = now + 50_000_000
        while active > 0 {
            let count = epoll.wait(milliseconds: 50)
            for index in 0..<count {
                let (events, token) = epoll.event(index)
                guard token >= 0, token < connections.count else { continue }
                let connection = connections[token]
                if connection.finished { continue }
                if events & Epoll.writable != 0 { write(connection) }
                if !connection.finished, events & (Epoll.readable | Epoll.error | Epoll.hangUp) != 0 { read(connection) }
            }
            now = Self.now()
            if now >= nextTimeoutCheck {
                nextTimeoutCheck = now + 50_000_000
                for connection in connections where !connection.finished && connection.inFlight && now - connection.sentAt > timeout {
                    fail(connection, "no complete response to request \(connection.current + 1) within \(HTTPBench.format(Double(timeout) * 1e-9)) s (\(connection.filled) bytes of it read)")
                }
            }
        }
    }

    // MARK: - One connection

    /// Sends the connection's next request, or finishes it (list done, deadline passed).
    private func startNext(_ connection: Connection, now: UInt64) {
        let count = connection.plan.ends.count
        if connection.current >= count {
            if cycle && count > 0 { connection.current = 0 } else { return finish(connection, at: now) }
        }
        if now >= deadline { return finish(connection, at: now) }
        connection.inFlight = true
        connection.written = 0
        connection.length = connection.plan.ends[connection.current] - (connection.current == 0 ? 0 : connection.plan.ends[connection.current - 1])
        connection.sentAt = now
        write(connection)
    }

    /// Writes what is left of the current request; watches `EPOLLOUT` while the socket is full.
    private func write(_ connection: Connection) {
        guard connection.inFlight else { return }
        let index = connection.current, length = connection.length
        let start = connection.plan.ends[index] - length
        while connection.written < length {
            let sent = connection.plan.bytes.withUnsafeBytes { raw in
                send(connection.descriptor, raw.baseAddress! + start + connection.written, length - connection.written, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                connection.written += sent
                continue
            }
            let code = errno
            if sent < 0 && code == EINTR { continue }
            if sent < 0 && (code == EAGAIN || code == EWOULDBLOCK) {
                if !connection.waitingToWrite { watch(connection, writing: true) }
                return
            }
            return fail(connection, "send failed on request \(index + 1) (errno \(code): \(String(cString: strerror(code))))")
        }
        if connection.waitingToWrite { watch(connection, writing: false) }
    }

    private func watch(_ connection: Connection, writing: Bool) {
        do {
            try epoll.watch(connection.descriptor, for: writing ? Epoll.readable | Epoll.writable : Epoll.readable,
                            token: connection.token, change: true)
            connection.waitingToWrite = writing
        } catch {
            fail(connection, error.description)
        }
    }

    /// Reads what arrived; on a whole response, checks it and starts the next request.
    private func read(_ connection: Connection) {
        if connection.filled == connection.buffer.count {
            // A response larger than the buffer (only the body's size limit bounds it): grow, rarely.
            let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: connection.buffer.count * 2, alignment: 8)
            larger.copyMemory(from: UnsafeRawBufferPointer(connection.buffer))
            connection.buffer.deallocate()
            connection.buffer = larger
        }
        let received = recv(connection.descriptor, connection.buffer.baseAddress! + connection.filled,
                            connection.buffer.count - connection.filled, 0)
        if received < 0 {
            let code = errno
            if code == EAGAIN || code == EWOULDBLOCK || code == EINTR { return }
            return fail(connection, "recv failed \(connection.inFlight ? "on request \(connection.current + 1)" : "between requests") (errno \(code): \(String(cString: strerror(code))))")
        }
        if received == 0 {
            return fail(connection, connection.inFlight
                ? "the server closed the connection before answering request \(connection.current + 1) (\(connection.filled) bytes of its response read; \(connection.responses) answered before)"
                : "the server closed an idle connection after \(connection.responses) responses")
        }
        connection.filled += received
        guard connection.inFlight, connection.written == connection.length else {
            return fail(connection, "\(connection.filled) bytes from the server before the request was sent: \(HTTPResponseParser.quote(UnsafeRawBufferPointer(connection.buffer), 0, min(connection.filled, 80)))")
        }
        let bytes = UnsafeRawBufferPointer(rebasing: connection.buffer[0..<connection.filled])
        switch connection.parser.parse(bytes) {
        case .incomplete:
            return
        case .malformed(let problem):
            return fail(connection, "response to request \(connection.current + 1): \(problem)")
        case .complete(let response):
            let now = Self.now()
            outcome.latency.record(nanoseconds: now - connection.sentAt)
            outcome.requests += 1
            connection.responses += 1
            let body = UnsafeRawBufferPointer(rebasing: bytes[response.bodyStart..<response.end])
            let expected = connection.plan.expected[connection.current]
            let (accepted, correct) = HTTPLoadGenerator.check(status: response.status, body: body, expected: Int(expected))
            outcome.accepted += accepted
            if !correct {
                outcome.failures += 1
                if outcome.firstFailure == nil {
                    outcome.firstFailure = HTTPLoadGenerator.describe(status: response.status, body: body, expected: Int(expected))
                }
            }
            if response.end < connection.filled {
                return fail(connection, "\(connection.filled - response.end) unexpected bytes after the response to request \(connection.current + 1) (one request in flight, no pipelining)")
            }
            if response.closes {
                return fail(connection, "the server answered request \(connection.current + 1) with Connection: close (keep-alive expected)")
            }
            connection.filled = 0
            connection.parser.reset()
            connection.inFlight = false
            connection.current += 1
            startNext(connection, now: now)
        }
    }

    /// Counts a failure and finishes the connection.
    private func fail(_ connection: Connection, _ problem: String) {
        outcome.failures += 1
        if outcome.firstFailure == nil { outcome.firstFailure = problem }
        finish(connection, at: Self.now())
    }

    private func finish(_ connection: Connection, at now: UInt64) {
        guard !connection.finished else { return }
        connection.finished = true
        connection.inFlight = false
        epoll.unwatch(connection.descriptor)
        active -= 1
        lastEnd = max(lastEnd, now)
    }
}
