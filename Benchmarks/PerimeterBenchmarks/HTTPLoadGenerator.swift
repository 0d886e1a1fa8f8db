import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 load generator over POSIX sockets, for when `wrk` is not installed (CI): N
/// keep-alive connections to a loopback port, each on its own thread, each sending its own requests
/// one at a time and in order (so a device's updates, kept on one connection, arrive in time order),
/// checking every response.
public enum HTTPLoadGenerator {
    /// One request, ready to send.
    public struct Request: Sendable {
        /// The request bytes: request line, headers and body.
        public var bytes: [UInt8]
        /// Updates the server must accept (`"accepted": n` and no rejection); `nil`: only a 200 is checked.
        public var expectedAccepted: Int?

        /// Builds a request to `path` on the loopback host.
        public init(method: String, path: String, contentType: String? = nil, body: [UInt8] = [], expectedAccepted: Int? = nil) {
            var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            if let contentType { head += "Content-Type: \(contentType)\r\n" }
            if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
            head += "\r\n"
            bytes = Array(head.utf8) + body
            self.expectedAccepted = expectedAccepted
        }
    }

    /// What a run did.
    public struct Outcome: Sendable {
        /// Requests answered (correctly or not).
        public var requests = 0
        /// Updates the server said it accepted.
        public var accepted = 0
        /// Responses that were not what was expected (status, accepted count, rejections), or broken connections.
        public var failures = 0
        /// The first failure, described.
        public var firstFailure: String?
        /// Wall-clock seconds from the start until the last connection finished.
        public var seconds = 0.0

        /// Requests per second.
        public var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    }

    /// Sends `connections[i]` over connection *i* until every list is sent or `duration` seconds have
    /// passed; the connections' threads may run on every core (the benchmark process itself is pinned).
    /// - Complexity: one thread and one socket per connection; the requests are prepared beforehand.
    public static func run(port: UInt16, connections: [[Request]], duration: Double) -> Outcome {
        let results = Results(count: connections.count)
        let done = DispatchSemaphore(value: 0)
        let start = Measure.wallSeconds()
        let deadline = start + duration
        for (index, requests) in connections.enumerated() {
            let thread = Thread {
                unpinCurrentThread()
                results.store(index, drive(port: port, requests: requests, deadline: deadline), end: Measure.wallSeconds())
                done.signal()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in connections { done.wait() }
        var outcome = results.merged()
        outcome.seconds = max(1e-9, results.lastEnd - start)
        return outcome
    }

    /// One request on a fresh connection: the status and the body (`nil` when the server cannot be reached).
    public static func fetch(port: UInt16, _ request: Request) -> (status: Int, body: [UInt8])? {
        guard let socket = LoadConnection(port: port) else { return nil }
        defer { socket.close() }
        guard socket.send(request.bytes), let response = socket.receiveResponse() else { return nil }
        return response
    }

    // MARK: - One connection

    static func drive(port: UInt16, requests: [Request], deadline: Double) -> Outcome {
        var outcome = Outcome()
        guard !requests.isEmpty else { return outcome }
        guard let connection = LoadConnection(port: port) else {
            outcome.failures = 1
            outcome.firstFailure = "cannot connect to 127.0.0.1:\(port)"
            return outcome
        }
        defer { connection.close() }
        for request in requests {
            if Measure.wallSeconds() >= deadline { break }
            guard connection.send(request.bytes), let (status, body) = connection.receiveResponse() else {
                outcome.failures += 1
                outcome.firstFailure = outcome.firstFailure ?? "connection closed by the server"
                break
            }
            outcome.requests += 1
            if let problem = check(status: status, body: body, expected: request.expectedAccepted, into: &outcome) {
                outcome.failures += 1
                outcome.firstFailure = outcome.firstFailure ?? problem
            }
        }
        return outcome
    }

    /// `nil` when the response is right; otherwise what is wrong.
    static func check(status: Int, body: [UInt8], expected: Int?, into outcome: inout Outcome) -> String? {
        guard status == 200 else {
            return "status \(status): \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
        guard let expected else { return nil }
        let accepted = integer(after: Array(#""accepted":"#.utf8), in: body)
        outcome.accepted += accepted ?? 0
        guard accepted == expected, contains(Array(#""rejected":[]"#.utf8), in: body) else {
            return "expected \(expected) accepted and no rejection, got: \(String(decoding: body.prefix(300), as: UTF8.self))"
        }
        return nil
    }

    static func contains(_ needle: [UInt8], in haystack: [UInt8]) -> Bool { find(needle, in: haystack[...]) != nil }

    static func find(_ needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        guard haystack.count >= needle.count, let first = needle.first else { return nil }
        var index = haystack.startIndex
        let last = haystack.endIndex - needle.count
        while index <= last {
            if haystack[index] == first && haystack[index..<index + needle.count].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    static func integer(after key: [UInt8], in body: [UInt8]) -> Int? {
        guard var index = find(key, in: body[...]).map({ $0 + key.count }) else { return nil }
        var value = 0, digits = 0
        while index < body.count, body[index] >= 48, body[index] <= 57 {
            value = value * 10 + Int(body[index] - 48)
            digits += 1
            index += 1
        }
        return digits > 0 ? value : nil
    }

    /// Lets the calling thread run on every core (threads inherit the benchmark's `taskset` pinning).
    /// `sched_setaffinity` is a GNU extension the Glibc module does not export, so it is looked up.
    static func unpinCurrentThread() {
        typealias SetAffinity = @convention(c) (pid_t, Int, UnsafeRawPointer) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "sched_setaffinity") else { return }
        let setAffinity = unsafeBitCast(symbol, to: SetAffinity.self)
        var mask = [UInt64](repeating: 0, count: 16)  // 1,024 CPUs, the size of glibc's cpu_set_t
        for core in 0..<max(1, min(ProcessInfo.processInfo.activeProcessorCount, 1_024)) {
            mask[core / 64] |= 1 << UInt64(core % 64)
        }
        _ = mask.withUnsafeBytes { setAffinity(0, $0.count, $0.baseAddress!) }
    }

    /// The connections' outcomes, filled in by their threads.
    final class Results: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var outcomes: [Outcome]
        private(set) var lastEnd = 0.0

        init(count: Int) { outcomes = Array(repeating: Outcome(), count: count) }

        func store(_ index: Int, _ outcome: Outcome, end: Double) {
            lock.lock()
            outcomes[index] = outcome
            lastEnd = max(lastEnd, end)
            lock.unlock()
        }

        func merged() -> Outcome {
            lock.lock()
            defer { lock.unlock() }
            var total = Outcome()
            for outcome in outcomes {
                total.requests += outcome.requests
                total.accepted += outcome.accepted
                total.failures += outcome.failures
                total.firstFailure = total.firstFailure ?? outcome.firstFailure
            }
            return total
        }
    }
}
