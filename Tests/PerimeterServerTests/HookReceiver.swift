import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny HTTP receiver on 127.0.0.1 (ephemeral port) that answers every request 200 and records it:
/// the target of the server's webhook tests (test targets cannot share PerimeterWebhookTests' receiver).
final class HookReceiver: @unchecked Sendable {
    struct Request: Sendable {
        var requestLine: String
        var headers: [String: String]
        var body: [UInt8]
    }

    let port: UInt16
    private let fd: Int32
    private let lock = NSLock()
    private var received: [Request] = []
    private var stopped = false
    private let done = DispatchSemaphore(value: 0)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else { close(fd); throw POSIXError(.EADDRINUSE) }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        self.fd = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread { [self] in
            while true {
                let client = accept(fd, nil, nil)
                if client < 0 {
                    if lock.withLock({ stopped }) || errno != EINTR { break }
                    continue
                }
                serve(client)
            }
            done.signal()
        }.start()
    }

    var url: String { "http://127.0.0.1:\(port)/hook" }

    var requests: [Request] { lock.withLock { received } }

    /// Waits (polling, at most `seconds`) until `count` requests arrived; suspends rather than blocks,
    /// so the server's tasks keep their share of the (small) concurrency pool.
    func wait(for count: Int, seconds: Double = 20) async -> [Request] {
        let deadline = Date().addingTimeInterval(seconds)
        while requests.count < count, Date() < deadline { try? await Task.sleep(nanoseconds: 20_000_000) }
        return requests
    }

    func stop() {
        lock.withLock { stopped = true }
        shutdown(fd, Int32(SHUT_RDWR))
        close(fd)
        done.wait()
    }

    private func serve(_ client: Int32) {
        defer { close(client) }
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        var headerEnd: Int?
        var contentLength = 0
        while headerEnd == nil || data.count < headerEnd! + contentLength {
            let count = chunk.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { return }
            data.append(contentsOf: chunk[0..<count])
            if headerEnd == nil, let range = data.firstRange(of: [13, 10, 13, 10]) {
                headerEnd = range.upperBound
                for line in String(decoding: data[..<range.lowerBound], as: UTF8.self).split(separator: "\r\n").dropFirst() {
                    let parts = line.split(separator: ":", maxSplits: 1)
                    if parts.count == 2, parts[0].lowercased() == "content-length" {
                        contentLength = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
                    }
                }
            }
        }
        guard let end = headerEnd else { return }
        let lines = String(decoding: data[..<(end - 4)], as: UTF8.self).split(separator: "\r\n").map(String.init)
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2 { headers[parts[0].lowercased()] = parts[1].trimmingCharacters(in: .whitespaces) }
        }
        lock.withLock {
            received.append(Request(requestLine: lines.first ?? "", headers: headers,
                                    body: Array(data[end..<(end + contentLength)])))
        }
        let response = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        _ = response.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
    }
}
