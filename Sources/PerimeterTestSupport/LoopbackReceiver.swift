import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP receiver on 127.0.0.1 (ephemeral port) for webhook tests: it answers requests according
/// to a script (then 200, or what `dynamic` says), and records every request it read completely. One
/// connection at a time, one request per connection (`Connection: close`).
public final class LoopbackReceiver: @unchecked Sendable {
    /// How to answer one request.
    public enum Behaviour: Sendable {
        /// Answer with this status.
        case status(Int)
        /// Read the request, then say nothing for this long and close (a timeout for the client).
        case hang(Double)
        /// Close the connection right after reading the request, without a response.
        case close
    }

    /// A request as received.
    public struct Request: Sendable {
        /// The method, e.g. `POST`.
        public var method: String
        /// The request target, e.g. `/hook`.
        public var path: String
        /// Header fields, names lower-cased.
        public var headers: [String: String]
        /// The body (per Content-Length).
        public var body: [UInt8]
        /// The status it was answered with; `nil` when it was not answered (hang, close).
        public var answered: Int?
        /// When its last byte arrived. A test that checks a signature's age checks it against this
        /// instant: the test itself may resume much later on a loaded machine (a sanitizer run).
        public var receivedAt = Date()

        /// `METHOD PATH HTTP/1.1`, as the request line read.
        public var requestLine: String { "\(method) \(path) HTTP/1.1" }
    }

    /// The port it listens on.
    public let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var script: [Behaviour]
    private var dynamic: (@Sendable (Request) -> Behaviour)?
    private var _requests: [Request] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    /// Starts listening at once; `script` answers the first requests in order, then `dynamic` (or 200).
    public init(script: [Behaviour] = [], dynamic: (@Sendable (Request) -> Behaviour)? = nil) throws {
        self.script = script
        self.dynamic = dynamic
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        self.fd = fd
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in acceptLoop() }
        thread.start()
    }

    /// `http://127.0.0.1:PORT/hook`.
    public var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Every request read so far, in arrival order.
    public var requests: [Request] { lock.withLock { _requests } }

    /// Requests that were answered with a 2xx.
    public var delivered: [Request] { requests.filter { ($0.answered ?? 0) / 100 == 2 } }

    /// Replaces the script for the next requests.
    public func setScript(_ behaviours: [Behaviour]) { lock.withLock { script = behaviours } }

    /// Waits (polling, at most `seconds`) until `count` requests arrived; suspends rather than blocks,
    /// so a server's tasks keep their share of the (small) concurrency pool.
    public func wait(for count: Int, seconds: Double = 20) async -> [Request] {
        let deadline = Date().addingTimeInterval(seconds)
        while requests.count < count, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        return requests
    }

    /// Stops listening; returns once the accept loop has ended.
    public func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        // Shut down (which ends a waiting `accept`), wait for the loop, and only then close: closed
        // earlier, the descriptor's number could be handed to another test's socket while the loop,
        // finishing a request, was about to call `accept` on it again.
        shutdown(fd, Int32(SHUT_RDWR))
        done.wait()
        close(fd)
    }

    private func acceptLoop() {
        while !lock.withLock({ stopped }) {
            let client = accept(fd, nil, nil)
            if client < 0 {
                if lock.withLock({ stopped }) { break }
                if errno == EINTR { continue }
                break
            }
            handle(client)
        }
        done.signal()
    }

    private func handle(_ client: Int32) {
        defer { close(client) }
        guard var request = read(client) else { return }
        let behaviour: Behaviour = lock.withLock {
            if !script.isEmpty { return script.removeFirst() }
            return dynamic?(request) ?? .status(200)
        }
        switch behaviour {
        case .status(let code):
            request.answered = code
            // Record before answering so a test that sees the counter move also sees the request.
            lock.withLock { _requests.append(request) }
            let response = "HTTP/1.1 \(code) Scripted\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"
            _ = response.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
        case .hang(let seconds):
            lock.withLock { _requests.append(request) }
            Thread.sleep(forTimeInterval: seconds)
        case .close:
            lock.withLock { _requests.append(request) }
        }
    }

    private func read(_ client: Int32) -> Request? {
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        var contentLength = 0
        while true {
            if headerEnd == nil, let range = data.firstRange(of: [13, 10, 13, 10]) {
                headerEnd = range.upperBound
                let head = String(decoding: data[..<range.lowerBound], as: UTF8.self)
                for line in head.split(separator: "\r\n").dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
            if let headerEnd, data.count >= headerEnd + contentLength { break }
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress!, $0.count, 0) }
            guard count > 0 else { return nil }
            data.append(contentsOf: chunk[0..<count])
        }
        guard let headerEnd else { return nil }
        let head = String(decoding: data[..<(headerEnd - 4)], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        let requestLine = lines.first?.split(separator: " ") ?? []
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        return Request(method: requestLine.count > 0 ? String(requestLine[0]) : "",
                       path: requestLine.count > 1 ? String(requestLine[1]) : "",
                       headers: headers, body: Array(data[headerEnd..<(headerEnd + contentLength)]), answered: nil)
    }
}
