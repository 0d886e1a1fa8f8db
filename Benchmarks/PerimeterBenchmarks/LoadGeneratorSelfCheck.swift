import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Checks of the built-in load generator that need no Perimeter server, run by ``HTTPBench`` (smoke mode
/// included) before it measures: ``HTTPResponseParser`` on canned responses (whole, byte by byte,
/// malformed), the update check, and ``HTTPLoadGenerator/run(port:connections:duration:threads:cycle:timeout:)``
/// against a scripted loopback server that answers right, closes the connection, stalls, or answers
/// chunked — each must end with the expected count or a described failure, never a hang or a crash.
/// (The package's test targets cannot import the benchmark module, so these checks live here.)
enum LoadGeneratorSelfCheck {
    /// How many cases ``problems()`` runs.
    static let caseCount = parserCases.count + 4 + loopCases.count

    /// What went wrong; empty when every case behaved.
    static func problems() -> [String] {
        var problems: [String] = []
        for (name, text, expected) in parserCases {
            let bytes = Array(text.utf8)
            let whole = parse(bytes, pieces: [bytes.count])
            let trickled = parse(bytes, pieces: Array(repeating: 1, count: bytes.count))
            if !whole.matches(expected) { problems.append("parser, \(name): \(whole), expected \(expected)") }
            if !trickled.matches(expected) { problems.append("parser byte by byte, \(name): \(trickled), expected \(expected)") }
        }
        let checks: [(String, Int, Int, (Int, Bool))] = [
            (#"{"accepted":1,"rejected":[]}"#, 200, 1, (1, true)),
            (#"{"accepted": 1000, "rejected": []}"#, 200, 1_000, (1_000, false)),  // the server writes no space before []
            (#"{"accepted":0,"rejected":[{"index":0}]}"#, 200, 1, (0, false)),
            (#"{"status":"ok"}"#, 503, -1, (0, false)),
        ]
        for (body, status, expected, answer) in checks {
            let result = Array(body.utf8).withUnsafeBytes { HTTPLoadGenerator.check(status: status, body: $0, expected: expected) }
            if result != answer { problems.append("check of \(status) \(body): \(result), expected \(answer)") }
        }
        for (name, replies, requests, expectation) in loopCases {
            if let problem = runLoop(name: name, replies: replies, requests: requests, expectation: expectation) {
                problems.append(problem)
            }
        }
        return problems
    }

    /// What a case must give: a complete response's status and body length, `incomplete`, or a failure
    /// whose description contains a word.
    enum Parsed: Equatable, CustomStringConvertible {
        case response(status: Int, bodyLength: Int, closes: Bool)
        case incomplete
        case malformed(containing: String)

        /// Whether this (what the parser gave) is `expected`: equal, or a failure containing the expected word.
        func matches(_ expected: Parsed) -> Bool {
            if case .malformed(let problem) = self, case .malformed(let word) = expected { return problem.contains(word) }
            return self == expected
        }

        var description: String {
            switch self {
            case .response(let status, let length, let closes): "response \(status), \(length) body bytes\(closes ? ", close" : "")"
            case .incomplete: "incomplete"
            case .malformed(let text): "malformed (\(text))"
            }
        }
    }

    static let parserCases: [(String, String, Parsed)] = [
        ("200 with a body", "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello", .response(status: 200, bodyLength: 5, closes: false)),
        ("header case and spaces", "HTTP/1.1 400 Bad Request\r\ncontent-LENGTH:  2 \r\nConnection: Close\r\n\r\n{}", .response(status: 400, bodyLength: 2, closes: true)),
        ("no reason phrase", "HTTP/1.0 204\r\n\r\n", .response(status: 204, bodyLength: 0, closes: false)),
        ("body still coming", "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nhalf", .incomplete),
        ("head still coming", "HTTP/1.1 200 OK\r\nContent-Len", .incomplete),
        ("chunked", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", .malformed(containing: "Transfer-Encoding")),
        ("unframed", "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nhello", .malformed(containing: "without Content-Length")),
        ("not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", .malformed(containing: "status line")),
        ("bad status", "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n", .malformed(containing: "status line")),
        ("interim", "HTTP/1.1 100 Continue\r\n\r\n", .malformed(containing: "interim")),
        ("two lengths", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab", .malformed(containing: "two different")),
        ("bad length", "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", .malformed(containing: "Content-Length")),
        ("header without colon", "HTTP/1.1 200 OK\r\nContent-Length 1\r\n\r\na", .malformed(containing: "header line")),
        ("endless head", "HTTP/1.1 200 OK\r\n" + String(repeating: "X-Filler: 0123456789\r\n", count: 1_000), .malformed(containing: "no end")),
    ]

    /// Feeds `bytes` to a parser in pieces of the given sizes, as reads would.
    static func parse(_ bytes: [UInt8], pieces: [Int]) -> Parsed {
        var parser = HTTPResponseParser()
        var end = 0
        var last = Parsed.incomplete
        for piece in pieces {
            end = min(bytes.count, end + piece)
            let result = bytes.withUnsafeBytes { parser.parse(UnsafeRawBufferPointer(rebasing: $0[0..<end])) }
            switch result {
            case .incomplete: last = .incomplete
            case .complete(let response):
                return .response(status: response.status, bodyLength: response.end - response.bodyStart, closes: response.closes)
            case .malformed(let problem):
                return .malformed(containing: problem)
            }
        }
        return last
    }

    // MARK: - The event loop against a scripted server

    /// A scripted answer to a request: bytes to send, `nil` to close the connection, empty to stall.
    typealias Reply = [UInt8]?

    /// What a loop case must end with: answered requests and accepted updates, and a failure containing a word (or none).
    struct Expectation {
        var requests: Int
        var accepted: Int
        var failure: String?
    }

    static func ok(_ body: String) -> Reply {
        Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)".utf8)
    }

    static let loopCases: [(String, [Reply], Int, Expectation)] = [
        ("answers", [ok(#"{"accepted":1,"rejected":[]}"#), ok(#"{"accepted":1,"rejected":[]}"#), ok(#"{"accepted":1,"rejected":[]}"#)], 3,
         Expectation(requests: 3, accepted: 3, failure: nil)),
        ("a rejection", [ok(#"{"accepted":1,"rejected":[]}"#), ok(#"{"accepted":0,"rejected":[{"index":0}]}"#)], 2,
         Expectation(requests: 2, accepted: 1, failure: "expected 1 accepted")),
        ("closed", [ok(#"{"accepted":1,"rejected":[]}"#), nil], 3, Expectation(requests: 1, accepted: 1, failure: "closed the connection")),
        ("stalled", [ok(#"{"accepted":1,"rejected":[]}"#), []], 3, Expectation(requests: 1, accepted: 1, failure: "no complete response")),
        ("chunked", [Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n".utf8)], 2,
         Expectation(requests: 0, accepted: 0, failure: "Transfer-Encoding")),
    ]

    /// Runs `requests` single-update requests on one connection against a server answering `replies`
    /// in turn (then stalling); `nil` when the outcome is as expected.
    static func runLoop(name: String, replies: [Reply], requests: Int, expectation: Expectation) -> String? {
        let server: ScriptedServer
        do { server = try ScriptedServer(replies: replies) } catch { return "loop, \(name): \(error)" }
        defer { server.stop() }
        let request = HTTPLoadGenerator.Request(method: "GET", path: "/check", expectedAccepted: 1)
        let start = Measure.wallSeconds()
        let outcome = HTTPLoadGenerator.run(port: server.port, connections: [Array(repeating: request, count: requests)],
                                            duration: 10, threads: 1, timeout: 0.3)
        let seconds = Measure.wallSeconds() - start
        let failureMatches = expectation.failure.map { word in outcome.firstFailure?.contains(word) == true } ?? (outcome.failures == 0)
        guard outcome.requests == expectation.requests, outcome.accepted == expectation.accepted, failureMatches, seconds < 5 else {
            return "loop, \(name): \(outcome.requests) answered, \(outcome.accepted) accepted, failure \(outcome.firstFailure ?? "none") in \(String(format: "%.1f", seconds)) s; expected \(expectation.requests), \(expectation.accepted), \(expectation.failure ?? "none")"
        }
        return nil
    }

    /// A loopback server for one connection that answers each request (read up to its blank line) with
    /// the next scripted reply, on its own thread.
    final class ScriptedServer: @unchecked Sendable {
        // @unchecked: `listener` is immutable; the thread owns the accepted socket.
        let port: UInt16
        private let listener: Int32
        private let finished = DispatchSemaphore(value: 0)

        struct Failure: Error, CustomStringConvertible {
            var description: String
        }

        init(replies: [Reply]) throws {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw Failure(description: "socket() failed (errno \(errno))") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafeMutablePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                    bind(fd, raw, length) == 0 && listen(fd, 4) == 0 && getsockname(fd, raw, &length) == 0
                }
            }
            guard bound else {
                close(fd)
                throw Failure(description: "cannot listen on loopback (errno \(errno))")
            }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)  // accept and reads give up rather than hang the benchmark
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            listener = fd
            port = UInt16(bigEndian: address.sin_port)
            let finished = self.finished
            let thread = Thread {
                Self.serve(listener: fd, replies: replies)
                finished.signal()
            }
            thread.start()
        }

        /// Waits for the thread (the client has closed its connection by then) and closes the listener.
        func stop() {
            _ = finished.wait(timeout: .now() + 6)
            close(listener)
        }

        private static func serve(listener: Int32, replies: [Reply]) {
            let client = accept(listener, nil, nil)
            guard client >= 0 else { return }
            defer { close(client) }
            var timeout = timeval(tv_sec: 5, tv_usec: 0)
            setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var pending: [UInt8] = []
            var scratch = [UInt8](repeating: 0, count: 4_096)
            var index = 0
            while true {
                // One request: up to its blank line (the checks send no bodies).
                while !pending.contains(subsequence: [13, 10, 13, 10]) {
                    let count = scratch.withUnsafeMutableBytes { recv(client, $0.baseAddress!, $0.count, 0) }
                    guard count > 0 else { return }
                    pending += scratch[0..<count]
                }
                pending.removeAll()
                guard index < replies.count, let reply = replies[index] else { return }  // no reply left or nil: close
                index += 1
                if reply.isEmpty {
                    // Stall: wait for the client to give up and close.
                    while scratch.withUnsafeMutableBytes({ recv(client, $0.baseAddress!, $0.count, 0) }) > 0 {}
                    return
                }
                _ = reply.withUnsafeBytes { send(client, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
            }
        }
    }
}

private extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard count >= subsequence.count else { return false }
        return (0...(count - subsequence.count)).contains { start in self[start..<start + subsequence.count].elementsEqual(subsequence) }
    }
}
