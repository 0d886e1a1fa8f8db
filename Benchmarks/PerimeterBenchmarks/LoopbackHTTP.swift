import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking HTTP/1.1 keep-alive connection to 127.0.0.1, for benchmarks that drive the server:
/// sends a request, reads a response with a `Content-Length` body.
final class LoopbackHTTP {
    /// A failed exchange.
    struct Failure: Error, CustomStringConvertible {
        /// What went wrong.
        var description: String
    }

    let fd: Int32
    var pending: [UInt8] = []

    /// Connects to 127.0.0.1:`port`.
    init(port: UInt16) throws {
        fd = try SSEClients.connect(port: port)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    /// Sends `method path` with a JSON `body`; returns the status and the body.
    func request(_ method: String, _ path: String, json body: [UInt8]) throws -> (status: Int, body: [UInt8]) {
        let head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\n\r\n"
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw Failure(description: "write failed (errno \(errno))") }
            sent += n
        }
        while true {
            if let end = Self.headEnd(pending) {
                let head = String(decoding: pending[..<end], as: UTF8.self)
                let lines = head.split(separator: "\r\n")
                guard let statusLine = lines.first, statusLine.split(separator: " ").count >= 2,
                      let status = Int(statusLine.split(separator: " ")[1]) else {
                    throw Failure(description: "bad status line")
                }
                let length = lines.dropFirst().compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
                    return Int(parts[1].trimmingCharacters(in: .whitespaces))
                }.first ?? 0
                let start = end + 4
                while pending.count < start + length { try fill() }
                let body = Array(pending[start..<start + length])
                pending.removeFirst(start + length)
                return (status, body)
            }
            try fill()
        }
    }

    func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
        guard n > 0 else { throw Failure(description: n == 0 ? "the server closed the connection" : "read failed (errno \(errno))") }
        pending.append(contentsOf: chunk[0..<n])
    }

    static func headEnd(_ bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for i in 0...(bytes.count - 4) where bytes[i] == 13 && bytes[i + 1] == 10 && bytes[i + 2] == 13 && bytes[i + 3] == 10 {
            return i
        }
        return nil
    }
}
