import Foundation
import PerimeterGeoJSON
import PerimeterHTTP
import PerimeterServer
import PerimeterService
import PerimeterTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A raw loopback socket for hostile-client tests: any source address in 127.0.0.0/8, bytes as they
/// are, reading until the server closes.
final class RawSocket {
    let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (another loopback address makes another client).
    init(port: UInt16, source: String = "127.0.0.1", receiveBuffer: Int32? = nil) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        if var size = receiveBuffer {
            setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
        }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_addr.s_addr = inet_addr(source)
        var remote = sockaddr_in()
        remote.sin_family = sa_family_t(AF_INET)
        remote.sin_port = port.bigEndian
        remote.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let connected = withUnsafePointer(to: &remote) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, connected == 0 else {
            close(fd)
            throw TestClient.Failure.connect
        }
    }

    deinit { close(fd) }

    /// Sends `bytes`; `false` once the server has closed the connection.
    @discardableResult
    func send(_ bytes: [UInt8]) -> Bool {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return false }
            sent += n
        }
        return true
    }

    func send(_ text: String) -> Bool { send(Array(text.utf8)) }

    /// Whether the server closed the connection (end of stream or reset), looking for up to `milliseconds`;
    /// bytes that arrive meanwhile are read and dropped.
    func isClosed(within milliseconds: Int32 = 0) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, milliseconds) == 1 else { return false }
        var scratch = [UInt8](repeating: 0, count: 65_536)
        let n = recv(fd, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        return n <= 0
    }

    /// Everything the server sends until it closes or `seconds` pass; whether it closed.
    func readAll(seconds: Double) -> (bytes: [UInt8], closed: Bool) {
        receive(seconds: seconds) { _ in false }
    }

    /// Reads until the last 64 KiB read (as text) satisfy `done`, the server closes, or `seconds` pass.
    func read(seconds: Double, until done: (String) -> Bool) -> String {
        String(decoding: receive(seconds: seconds) { done(String(decoding: $0.suffix(65_536), as: UTF8.self)) }.bytes,
               as: UTF8.self)
    }

    /// Reads until `done` holds for what was read, the server closes (`closed`), or `seconds` pass.
    private func receive(seconds: Double, until done: ([UInt8]) -> Bool) -> (bytes: [UInt8], closed: Bool) {
        var bytes: [UInt8] = []
        var scratch = [UInt8](repeating: 0, count: 65_536)
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 50) == 1 else { continue }
            let n = recv(fd, &scratch, scratch.count, 0)
            if n <= 0 { return (bytes, true) }
            bytes += scratch[..<n]
            if done(bytes) { break }
        }
        return (bytes, false)
    }
}

/// The transport and the event stream against hostile but honest clients, over real loopback sockets:
/// connection floods, slow senders, bad framing, stalled stream readers (docs/server.md, "Security and
/// limits"; docs/reliability.md).
@Suite("Hostile clients over a real loopback socket", .serialized)
struct HostileClientTests {
    static func echo(_ configuration: HTTPServer.Configuration) throws -> HTTPServer {
        try HTTPServer(configuration: configuration) { request in
            HTTPResponse(status: 200, contentType: "text/plain", bytes: Array(request.path.utf8))
        }
    }

    @Test func oneAddressFloodingConnectionsCannotStarveAnother() async throws {
        let server = try Self.echo(.init(port: 0, threads: 2, maximumConnections: 64, maximumConnectionsPerAddress: 8))
        defer { server.stop(drainTimeout: 0) }
        let port = server.port
        let (open, answered) = try await offThePool { () throws -> (Int, String) in
            // 40 idle connections from 127.0.0.2: 8 are kept, the others closed as soon as accepted.
            let flood = try (0..<40).map { _ in try RawSocket(port: port, source: "127.0.0.2") }
            #expect(waitUntil(seconds: 10) { server.refusals.perAddress >= 32 })
            let open = flood.filter { !$0.isClosed(within: 100) }.count
            // Another address is served at once.
            let started = Date()
            let answer = try TestClient(port: port, timeout: 2).request("GET", "/healthz").text
            #expect(Date().timeIntervalSince(started) < 2)
            return (open, answer)
        }
        #expect(open == 8)
        #expect(answered == "/healthz")
        #expect(server.refusals.perAddress == 32)
    }

    @Test func aHeaderByteEveryFewHundredMillisecondsIsCutAtTheRequestDeadline() async throws {
        let server = try Self.echo(.init(port: 0, threads: 1, connectionTimeout: 60, requestDeadline: 1))
        defer { server.stop(drainTimeout: 0) }
        let port = server.port
        let lasted = try await offThePool { () throws -> Double in
            let slow = try RawSocket(port: port)
            let started = Date()
            #expect(slow.send("GET /slow HTTP/1.1\r\nHost: a\r\nX-Slow: "))
            // One byte every 0.2 s would reset libmicrohttpd's idle timeout forever.
            while Date().timeIntervalSince(started) < 10 {
                if slow.isClosed(within: 200) || !slow.send("x") { break }
            }
            return Date().timeIntervalSince(started)
        }
        #expect(lasted >= 0.9 && lasted < 3, "closed after \(lasted) s")
        #expect(server.refusals.pastDeadline == 1, "lasted \(lasted), counters \(server.refusals)")
        // Prompt clients are unaffected, also on a kept-alive connection used within the deadline.
        let texts = try await offThePool { () throws -> [String] in
            let client = try TestClient(port: port)
            return try [client.request("GET", "/a").text, client.request("GET", "/b").text]
        }
        #expect(texts == ["/a", "/b"])
    }

    static func startServer(_ path: String? = nil, configure: (inout ServerConfiguration) -> Void = { _ in }) throws -> PerimeterServer {
        var configuration = ServerConfiguration(databasePath: path, port: 0, threads: 2,
                                                api: APIConfiguration(heartbeatInterval: 60),
                                                options: GeofencingOptions(defaultDwellTime: 600), drainTimeout: 5,
                                                allowPrivateWebhookTargets: true)
        configure(&configuration)
        return try PerimeterServer(configuration: configuration)
    }

    @Test(arguments: [
        ("Content-Length: 2\r\nContent-Length: 3\r\n", "different values"),
        ("Content-Length: 2\r\nContent-Length: 2 \r\nContent-Length: 3\r\n", "Content-Length"),
        ("Content-Length: 2\r\nTransfer-Encoding: chunked\r\n", "both Content-Length and Transfer-Encoding"),
    ])
    func badFramingIsOneProblemAndAClose(_ headers: String, _ detail: String) async throws {
        let server = try Self.startServer()
        defer { server.stop() }
        let port = server.port
        let (text, closed) = try await offThePool { () throws -> (String, Bool) in
            let socket = try RawSocket(port: port)
            #expect(socket.send("POST /v1/locations HTTP/1.1\r\nHost: a\r\nContent-Type: application/json\r\n\(headers)\r\n[]"))
            let (bytes, closed) = socket.readAll(seconds: 5)
            return (String(decoding: bytes, as: UTF8.self), closed)
        }
        #expect(closed)
        #expect(text.components(separatedBy: "HTTP/1.1 ").count == 2, "one answer: \(text)")
        #expect(text.hasPrefix("HTTP/1.1 400 "))
        #expect(text.lowercased().contains("content-type: application/problem+json"))
        #expect(text.contains("urn:perimeter:problem:bad-framing") && text.contains(detail))
    }

    /// A fence whose events carry `size` bytes of properties, so that a few thousand fill megabytes.
    static func heavyFence(size: Int) -> String {
        let blob = String(repeating: "x", count: size)
        return #"{"type":"Feature","properties":{"name":"Box","blob":"\#(blob)"},"geometry":{"type":"Polygon","coordinates":[[[-110.6,44.5],[-110.4,44.5],[-110.4,44.7],[-110.6,44.7],[-110.6,44.5]]]}}"#
    }

    /// A drive of `count` updates in and out of the test square: one event per update.
    static func zigzag(_ device: String, from start: Int, count: Int) -> [UInt8] {
        Array(T.json(.array((start..<(start + count)).map { T.update(device, $0 * 10, inside: $0 % 2 == 0) })).utf8)
    }

    /// The ids of the complete SSE messages in `text`.
    static func ids(_ text: String) -> [Int] {
        var messages = text.components(separatedBy: "\n\n")
        messages.removeLast()  // incomplete (or empty)
        return messages.compactMap { message in
            message.split(separator: "\n").first { $0.hasPrefix("id: ") }.flatMap { Int($0.dropFirst(4)) }
        }
    }

    @Test func theSharedStreamBudgetCutsTheClientsFurthestBehindNotThoseKeepingUp() {
        let budget = HTTPStreamBudget(limit: 100 << 10)
        let behind = HTTPStream(bufferLimit: 1 << 20, budget: budget)
        let keepingUp = HTTPStream(bufferLimit: 1 << 20, budget: budget)
        #expect(behind.write([UInt8](repeating: 65, count: 80 << 10)))
        // Past the budget, but this client holds next to nothing: it is not the one to cut.
        #expect(keepingUp.write([UInt8](repeating: 66, count: 30 << 10)))
        #expect(budget.bytesInUse == 110 << 10)
        // The client 80 KiB behind is cut at its next write, and its bytes go back to the budget.
        #expect(!behind.write([65]))
        #expect(behind.wasCut && !keepingUp.isClosed)
        #expect(budget.bytesInUse == 30 << 10)
    }

    @Test func aStreamClientThatStopsReadingIsCutAndResumesMissingNothing() async throws {
        let server = try Self.startServer { $0.streamBufferLimit = 256 << 10 }
        defer { server.stop() }
        let port = server.port
        let total = 3000
        let (first, resumed) = try await offThePool { () throws -> ([Int], [Int]) in
            // Bounds, not expectations of speed: under a sanitizer on a loaded machine the 13 MB of
            // events take minutes, and the test must still pass.
            let client = try TestClient(port: port, timeout: 180)
            #expect(try client.request("PUT", "/v1/fences/box", body: Array(Self.heavyFence(size: 4000).utf8)).status == 201)
            // HTTP/1.0: the stream's bytes come unchunked and end with the connection.
            let stalled = try RawSocket(port: port, receiveBuffer: 4096)
            #expect(stalled.send("GET /v1/events/stream HTTP/1.0\r\n\r\n"))
            #expect(stalled.read(seconds: 5) { $0.contains(": connected") }.contains("200"))
            // ≈ 13 MB of events, far more than the socket buffers hold, while the client reads nothing.
            let posted = try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                                            body: Self.zigzag("van", from: 0, count: total))
            #expect(posted.status == 200)
            // The server cut the client: what the sockets held arrives, then the end.
            let (bytes, closed) = stalled.readAll(seconds: 180)
            #expect(closed, "the stalled client was not disconnected")
            let first = Self.ids(String(decoding: bytes, as: UTF8.self))
            // It reconnects with Last-Event-ID and gets everything after it.
            let again = try RawSocket(port: port)
            #expect(again.send("GET /v1/events/stream HTTP/1.0\r\nLast-Event-ID: \(first.last ?? 0)\r\n\r\n"))
            let text = again.read(seconds: 180) { $0.contains("id: \(total)\n") && $0.hasSuffix("\n\n") }
            return (first, Self.ids(text))
        }
        // The cut may take what the client had not read yet with it (a reset): it resumes from the
        // last event it processed.
        #expect(first.count < total, "cut after \(first.count) of \(total)")
        #expect(first + resumed == Array(1...total), "\(first.count) before the cut, \(resumed.count) after: \(resumed.prefix(3)) … \(resumed.suffix(3))")
    }

    @Test func withATimedGroupCommitTheStreamShowsAnEventOnlyOnceItIsCommitted() async throws {
        let path = SocketTests.temporaryDatabase()
        defer { SocketTests.remove(path) }
        let server = try Self.startServer(path) { $0.commitInterval = 3600 }
        defer { server.stop() }
        let port = server.port
        let service = server.service
        let (before, committedBefore, after) = try await offThePool { () throws -> (String, UInt64, String) in
            let client = try TestClient(port: port)
            #expect(try client.request("PUT", "/v1/fences/box", body: Array(T.square().utf8)).status == 201)
            let stream = try RawSocket(port: port)
            #expect(stream.send("GET /v1/events/stream HTTP/1.0\r\n\r\n"))
            _ = stream.read(seconds: 5) { $0.contains(": connected") }
            let posted = try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                                            body: Self.zigzag("van", from: 0, count: 1))
            #expect(posted.status == 200 && posted.text.contains("\"entry\""))
            // Logged and answered, not committed: not shown.
            let before = stream.read(seconds: 1) { $0.contains("event: entry") }
            let committedBefore = service.commitCount
            try service.flush()
            let after = stream.read(seconds: 5) { $0.contains("event: entry") }
            return (before, committedBefore, after)
        }
        #expect(!before.contains("event: entry"), "shown before its commit")
        #expect(service.commitCount > committedBefore)
        #expect(after.contains("id: 1\nevent: entry"))
    }

    @Test func webhookDeliveryCountersSurviveARestart() async throws {
        let path = SocketTests.temporaryDatabase()
        defer {
            SocketTests.remove(path)
            SocketTests.remove(path + ".webhooks")
        }
        let receiver = try LoopbackReceiver()
        defer { receiver.stop() }
        let url = receiver.url
        let server = try Self.startServer(path)
        let port = server.port
        try await offThePool {
            let client = try TestClient(port: port)
            #expect(try client.request("PUT", "/v1/fences/box", body: Array(T.square().utf8)).status == 201)
            #expect(try client.request("POST", "/v1/webhooks", headers: ["Content-Type": "application/json"],
                                       body: Array(T.json(["url": .string(url), "id": "wh-1"]).utf8)).status == 201)
            #expect(try client.request("POST", "/v1/locations", headers: ["Content-Type": "application/json"],
                                       body: Self.zigzag("van", from: 0, count: 2)).status == 200)
        }
        #expect(await receiver.wait(for: 2).count == 2)
        let line = #"perimeter_webhook_deliveries_total{outcome="delivered"} 2"#
        let beforeRestart = try await offThePool { () throws -> Bool in
            let client = try TestClient(port: port)
            return waitUntil(seconds: 10) { (try? client.request("GET", "/metrics").text.contains(line)) == true }
        }
        #expect(beforeRestart)
        server.stop()

        let restarted = try Self.startServer(path)
        defer { restarted.stop() }
        let restartedPort = restarted.port
        let metrics = try await offThePool { try TestClient(port: restartedPort).request("GET", "/metrics").text }
        #expect(metrics.contains(line))
        #expect(metrics.contains(#"perimeter_webhook_deliveries_total{outcome="failed"} 0"#))
        #expect(metrics.contains(#"perimeter_webhook_deliveries_total{outcome="dead"} 0"#))
    }
}
