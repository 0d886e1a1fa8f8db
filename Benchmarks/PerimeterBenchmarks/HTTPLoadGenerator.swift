import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A small HTTP/1.1 load generator over POSIX sockets: N keep-alive connections to a loopback port,
/// shared among a few client threads (default 1), each an `epoll` event loop (``LoadLoop``) over
/// non-blocking sockets. Each connection sends its own requests one at a time and in order (so a
/// device's updates, kept on one connection, arrive in time order; no pipelining), checks every
/// response, and records its latency.
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
        /// Every answered request's latency, from its first byte sent to its response's last byte read.
        public var latency = LatencyHistogram()
        /// CPU time of the client threads during the run (`getrusage(RUSAGE_THREAD)` of each; `nil` if unread).
        public var clientCPU: CPUTime?

        /// Requests per second.
        public var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    }

    /// Sends `connections[i]` over connection *i* until every list is sent (with `cycle`: over and over)
    /// or `duration` seconds have passed, from `threads` client threads (connection *i* on thread
    /// *i* mod `threads`), which may run on every core (the benchmark process itself is pinned). A
    /// request unanswered after `timeout` seconds fails its connection.
    /// - Complexity: the requests are copied into one buffer per connection before the clock starts;
    ///   per request, one `send`, usually one `recv`, no allocation.
    public static func run(port: UInt16, connections: [[Request]], duration: Double, threads: Int = 1,
                           cycle: Bool = false, timeout: Double = 30) -> Outcome {
        var outcome = Outcome()
        // Prepare and connect everything before the clock starts.
        var descriptors: [Int32] = []
        defer { for fd in descriptors { close(fd) } }  // after every loop thread has finished
        for requests in connections where !requests.isEmpty {
            guard let fd = try? SSEClients.connect(port: port) else {
                outcome.failures = 1
                outcome.firstFailure = "cannot connect to 127.0.0.1:\(port)"
                return outcome
            }
            descriptors.append(fd)
            var one: Int32 = 1
            setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        }
        let plans: [LoadLoop.Plan] = connections.filter { !$0.isEmpty }.map { requests in
            var plan = LoadLoop.Plan()
            plan.bytes.reserveCapacity(requests.reduce(0) { $0 + $1.bytes.count })
            plan.ends.reserveCapacity(requests.count)
            plan.expected.reserveCapacity(requests.count)
            for request in requests { plan.append(request) }
            return plan
        }
        let threadCount = max(1, min(threads, plans.count))
        let start = LoadLoop.now()
        let deadline = start + UInt64(max(0, duration) * 1e9)
        var loops: [LoadLoop] = []
        do {
            for thread in 0..<threadCount {
                let share = stride(from: thread, to: plans.count, by: threadCount).map { (descriptor: descriptors[$0], plan: plans[$0]) }
                loops.append(try LoadLoop(connections: share, deadline: deadline, timeout: timeout, cycle: cycle))
            }
        } catch {
            outcome.failures = 1
            outcome.firstFailure = error.description
            return outcome
        }
        guard !loops.isEmpty else { return outcome }
        let cpu = ThreadTimes(count: loops.count)
        let done = DispatchSemaphore(value: 0)
        for (index, loop) in loops.enumerated() {
            let body = LoopBody(loop: loop)
            let thread = Thread {
                unpinCurrentThread()
                let before = ThreadTimes.current()
                body.loop.run()
                cpu.store(index, ThreadTimes.current().map { now in before.map { now - $0 } ?? now })
                done.signal()
            }
            thread.stackSize = 1 << 20
            thread.start()
        }
        for _ in loops { done.wait() }
        var end = start
        for loop in loops {
            let part = loop.outcome
            outcome.requests += part.requests
            outcome.accepted += part.accepted
            outcome.failures += part.failures
            outcome.firstFailure = outcome.firstFailure ?? part.firstFailure
            outcome.latency.merge(part.latency)
            end = max(end, loop.lastEnd)
        }
        outcome.seconds = max(1e-9, Double(end - start) * 1e-9)
        outcome.clientCPU = cpu.total()
        return outcome
    }

    /// A loop handed to its thread (the loop is used by that thread only until it signals `done`).
    private struct LoopBody: @unchecked Sendable {
        let loop: LoadLoop
    }

    /// The client threads' CPU times, each stored by its thread.
    final class ThreadTimes: @unchecked Sendable {
        // @unchecked: every access holds `lock`.
        private let lock = NSLock()
        private var times: [CPUTime?]

        init(count: Int) { times = Array(repeating: nil, count: count) }

        /// The calling thread's CPU time so far (`getrusage(RUSAGE_THREAD)`, a Linux extension: who = 1).
        static func current() -> CPUTime? {
            var usage = rusage()
            return getrusage(__rusage_who_t(1), &usage) == 0 ? CPUTime(usage) : nil
        }

        func store(_ index: Int, _ time: CPUTime?) {
            lock.lock()
            times[index] = time
            lock.unlock()
        }

        /// The sum, or `nil` when a thread's time is missing.
        func total() -> CPUTime? {
            lock.lock()
            defer { lock.unlock() }
            var sum = CPUTime(user: 0, system: 0)
            for time in times {
                guard let time else { return nil }
                sum = CPUTime(user: sum.user + time.user, system: sum.system + time.system)
            }
            return sum
        }
    }

    /// One request on a fresh connection: the status and the body (`nil` when the server cannot be reached).
    public static func fetch(port: UInt16, _ request: Request) -> (status: Int, body: [UInt8])? {
        guard let socket = LoadConnection(port: port) else { return nil }
        defer { socket.close() }
        guard socket.send(request.bytes), let response = socket.receiveResponse() else { return nil }
        return response
    }

    // MARK: - Checks

    /// Checks a response: status 200 and, when `expected` ≥ 0, `"accepted": expected` and `"rejected":[]`
    /// in the body. Returns the accepted count read (0 when absent) and whether all is right.
    /// - Complexity: O(body), no allocation.
    static func check(status: Int, body: UnsafeRawBufferPointer, expected: Int) -> (accepted: Int, correct: Bool) {
        guard status == 200 else { return (0, false) }
        guard expected >= 0 else { return (0, true) }
        let accepted = integer(after: #""accepted":"#, in: body)
        return (accepted ?? 0, accepted == expected && find(#""rejected":[]"#, in: body) != nil)
    }

    /// What is wrong with a response ``check(status:body:expected:)`` refused.
    static func describe(status: Int, body: UnsafeRawBufferPointer, expected: Int) -> String {
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: body[0..<min(body.count, 300)]), as: UTF8.self)
        guard status == 200 else { return "status \(status): \(text)" }
        return "expected \(expected) accepted and no rejection, got: \(text)"
    }

    /// The offset of `needle` in `haystack`, or `nil`.
    static func find(_ needle: StaticString, in haystack: UnsafeRawBufferPointer) -> Int? {
        let count = needle.utf8CodeUnitCount
        guard count > 0, haystack.count >= count else { return nil }
        let first = needle.utf8Start[0]
        var index = 0
        search: while index <= haystack.count - count {
            if haystack[index] == first {
                for offset in 1..<count where haystack[index + offset] != needle.utf8Start[offset] {
                    index += 1
                    continue search
                }
                return index
            }
            index += 1
        }
        return nil
    }

    /// The decimal integer right after `key` in `body`, or `nil`.
    static func integer(after key: StaticString, in body: UnsafeRawBufferPointer) -> Int? {
        guard var index = find(key, in: body).map({ $0 + key.utf8CodeUnitCount }) else { return nil }
        while index < body.count, body[index] == 32 { index += 1 }
        var value = 0, digits = 0
        while index < body.count, body[index] >= 48, body[index] <= 57, digits < 18 {
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
}
