import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Many Server-Sent-Events clients over plain POSIX sockets, read by one thread with `poll`: each
/// sends `GET path`, checks the `200`, decodes the chunked body and records the `id:` of every event
/// with the monotonic time it arrived. For the fan-out benchmark; knows only what it needs of HTTP/1.1
/// (a response head, then `Transfer-Encoding: chunked`).
///
/// ```swift
/// let clients = try SSEClients(port: 8080, count: 1_000, path: "/v1/events/stream")
/// try clients.waitUntilConnected(timeout: 30)
/// // … cause events …
/// clients.waitForDeliveries(total, timeout: 30)
/// clients.stop()
/// let ids = clients.receivedIDs(of: 0)
/// ```
final class SSEClients: @unchecked Sendable {
    /// Why the clients could not be set up.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    /// One connection's parser state; touched only by the reading thread (and after ``stop()``).
    struct Connection {
        enum Phase { case head, chunkSize, chunkData(Int), chunkEnd(Int), ended }
        var fd: Int32
        var phase = Phase.head
        var head: [UInt8] = []
        var line: [UInt8] = []
        var chunkLine: [UInt8] = []
        var ids: [Int64] = []
        var times: [Double] = []
        var failure: String?
    }

    var polled: [pollfd] = []
    var connections: [Connection] = []
    let connected = Atomic<Int>(0)
    let delivered = Atomic<Int>(0)
    let failed = Atomic<Int>(0)
    let stopping = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
    var thread: Thread?

    /// Connects `count` clients to 127.0.0.1:`port` and sends each `GET path`; starts reading.
    /// - Throws: ``Failure`` when a socket cannot be created or connected (descriptor limit, refused).
    init(port: UInt16, count: Int, path: String) throws {
        let request = Array("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".utf8)
        for index in 0..<count {
            let fd: Int32
            do { fd = try Self.connect(port: port) } catch {
                for connection in connections { close(connection.fd) }
                throw Failure(description: "client \(index) of \(count): \(error)")
            }
            let sent = request.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard sent == request.count else {
                close(fd)
                for connection in connections { close(connection.fd) }
                throw Failure(description: "client \(index): cannot send the request (errno \(errno))")
            }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            polled.append(pollfd(fd: fd, events: Int16(POLLIN), revents: 0))
            connections.append(Connection(fd: fd))
        }
        let thread = Thread { [self] in
            readLoop()
            finished.signal()
        }
        thread.name = "sse-clients"
        self.thread = thread
        thread.start()
    }

    deinit {
        for connection in connections where connection.fd >= 0 { close(connection.fd) }
    }

    /// Clients that received the response head (200) so far.
    var connectedCount: Int { connected.load(ordering: .acquiring) }
    /// Events received so far, summed over the clients.
    var deliveredCount: Int { delivered.load(ordering: .acquiring) }
    /// Clients whose stream broke (bad status, closed, malformed chunk).
    var failedCount: Int { failed.load(ordering: .acquiring) }

    /// Waits until every client got its `200` head (the server has registered it), or throws.
    func waitUntilConnected(timeout: Double) throws {
        let deadline = Measure.wallSeconds() + timeout
        while connectedCount < connections.count {
            if failedCount > 0 { throw Failure(description: "\(failedCount) clients failed while connecting: \(firstFailure ?? "")") }
            if Measure.wallSeconds() > deadline {
                throw Failure(description: "only \(connectedCount) of \(connections.count) clients connected within \(timeout) s")
            }
            usleep(1_000)
        }
    }

    /// Waits until `total` events were received over all clients, or no new one arrived for
    /// `timeout` seconds. Returns whether `total` was reached.
    @discardableResult
    func waitForDeliveries(_ total: Int, timeout: Double) -> Bool {
        var last = deliveredCount
        var progress = Measure.wallSeconds()
        while true {
            let now = deliveredCount
            if now >= total { return true }
            if failedCount > 0 { return false }
            if now != last {
                last = now
                progress = Measure.wallSeconds()
            } else if Measure.wallSeconds() - progress > timeout {
                return false
            }
            usleep(100)
        }
    }

    /// Stops reading and waits for the reading thread; the recorded ids stay readable. Idempotent.
    func stop() {
        guard !stopping.exchange(true, ordering: .acquiringAndReleasing) else { return }
        finished.wait()
        for index in connections.indices {
            close(connections[index].fd)
            connections[index].fd = -1
        }
    }

    /// The event ids client `index` received, in arrival order (after ``stop()``).
    func receivedIDs(of index: Int) -> [Int64] { connections[index].ids }

    /// The arrival times (``Measure/wallSeconds()``) matching ``receivedIDs(of:)`` (after ``stop()``).
    func arrivalTimes(of index: Int) -> [Double] { connections[index].times }

    /// The first client failure, if any (after ``stop()``, or racy before).
    var firstFailure: String? { connections.lazy.compactMap(\.failure).first }

    // MARK: - Reading

    func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while !stopping.load(ordering: .acquiring) {
            let ready = poll(&polled, nfds_t(polled.count), 20)
            guard ready > 0 else { continue }
            let now = Measure.wallSeconds()
            for index in polled.indices where polled[index].revents != 0 {
                polled[index].revents = 0
                while true {
                    let count = buffer.withUnsafeMutableBytes { Glibc.read(connections[index].fd, $0.baseAddress, $0.count) }
                    if count > 0 {
                        consume(index, buffer[0..<count], at: now)
                        if count < buffer.count { break }
                    } else if count == 0 {
                        fail(index, "the server closed the stream")
                        break
                    } else {
                        if errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR { fail(index, "read failed (errno \(errno))") }
                        break
                    }
                }
            }
        }
    }

    func fail(_ index: Int, _ message: String) {
        guard connections[index].failure == nil else { return }
        connections[index].failure = "client \(index): \(message)"
        connections[index].phase = .ended
        polled[index].fd = -1  // poll ignores negative descriptors
        failed.add(1, ordering: .releasing)
    }

    /// Runs the bytes through the head / chunk / SSE-line state machine.
    func consume(_ index: Int, _ bytes: ArraySlice<UInt8>, at time: Double) {
        var position = bytes.startIndex
        while position < bytes.endIndex {
            switch connections[index].phase {
            case .ended:
                return
            case .head:
                connections[index].head.append(bytes[position])
                position += 1
                let head = connections[index].head
                if head.count >= 4, head[head.count - 4..<head.count].elementsEqual([13, 10, 13, 10]) {
                    let text = String(decoding: head, as: UTF8.self)
                    guard text.hasPrefix("HTTP/1.1 200") else {
                        fail(index, "status line \(text.prefix(while: { $0 != "\r" }))")
                        return
                    }
                    guard text.lowercased().contains("transfer-encoding: chunked") else {
                        fail(index, "the stream is not chunked")
                        return
                    }
                    connections[index].head = []
                    connections[index].phase = .chunkSize
                    connected.add(1, ordering: .releasing)
                }
            case .chunkSize:
                let byte = bytes[position]
                position += 1
                guard byte == 10 else {
                    if byte != 13 { connections[index].chunkLine.append(byte) }
                    continue
                }
                let text = String(decoding: connections[index].chunkLine, as: UTF8.self)
                connections[index].chunkLine = []
                guard let size = Int(text.split(separator: ";").first ?? "", radix: 16) else {
                    fail(index, "bad chunk size '\(text)'")
                    return
                }
                if size == 0 {
                    fail(index, "the server ended the stream")
                    return
                }
                connections[index].phase = .chunkData(size)
            case .chunkData(let remaining):
                let take = min(remaining, bytes.endIndex - position)
                sseBytes(index, bytes[position..<position + take], at: time)
                position += take
                connections[index].phase = remaining == take ? .chunkEnd(2) : .chunkData(remaining - take)
            case .chunkEnd(let remaining):
                position += 1
                connections[index].phase = remaining == 1 ? .chunkSize : .chunkEnd(remaining - 1)
            }
        }
    }

    /// Splits SSE data into lines (a line may span reads); an `id:` line records the event.
    func sseBytes(_ index: Int, _ bytes: ArraySlice<UInt8>, at time: Double) {
        var start = bytes.startIndex
        while let newline = bytes[start...].firstIndex(of: 10) {
            if connections[index].line.isEmpty {
                sseLine(index, bytes[start..<newline], at: time)
            } else {
                connections[index].line.append(contentsOf: bytes[start..<newline])
                let line = connections[index].line
                connections[index].line.removeAll(keepingCapacity: true)
                sseLine(index, line[...], at: time)
            }
            start = newline + 1
        }
        connections[index].line.append(contentsOf: bytes[start...])
    }

    func sseLine(_ index: Int, _ line: ArraySlice<UInt8>, at time: Double) {
        let i = line.startIndex
        guard line.count > 3, line[i] == UInt8(ascii: "i"), line[i + 1] == UInt8(ascii: "d"), line[i + 2] == UInt8(ascii: ":") else {
            return
        }
        var value: Int64 = 0
        for byte in line.dropFirst(3) where byte != 32 && byte != 13 {
            guard byte >= 48 && byte <= 57 else {
                fail(index, "bad id line")
                return
            }
            value = value * 10 + Int64(byte - 48)
        }
        connections[index].ids.append(value)
        connections[index].times.append(time)
        delivered.add(1, ordering: .releasing)
    }

    /// A blocking loopback connection.
    static func connect(port: UInt16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed (errno \(errno): descriptor limit?)") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw Failure(description: "connect() failed (errno \(code))")
        }
        return fd
    }
}
