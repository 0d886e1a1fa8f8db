import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking keep-alive client socket that reads `Content-Length` responses.
final class LoadConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    /// Connects to 127.0.0.1:`port`; `nil` when the server cannot be reached. A response that takes
    /// more than 30 s counts as a failed read, so a stuck server fails the benchmark instead of hanging it.
    init?(port: UInt16) {
        guard let fd = try? SSEClients.connect(port: port) else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var timeout = timeval(tv_sec: 30, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        descriptor = fd
    }

    func close() { Glibc.close(descriptor) }

    func send(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let written = Glibc.send(descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written < 0 && errno == EINTR { continue }
                guard written > 0 else { return false }
                offset += written
            }
            return true
        }
    }

    /// Reads one response: its status and body (the body needs a `Content-Length`).
    func receiveResponse() -> (status: Int, body: [UInt8])? {
        let separator: [UInt8] = [13, 10, 13, 10]
        var headEnd = HTTPLoadGenerator.find(separator, in: buffer[...])
        while headEnd == nil {
            guard fill() else { return nil }
            headEnd = HTTPLoadGenerator.find(separator, in: buffer[...])
        }
        guard let headEnd else { return nil }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/1.1 "),
              let status = Int(statusLine.dropFirst(9).prefix(3)) else { return nil }
        var length = 0
        for line in lines.dropFirst() where line.lowercased().hasPrefix("content-length:") {
            length = Int(line.dropFirst(15).trimmingCharacters(in: .whitespaces)) ?? 0
        }
        let bodyStart = headEnd + 4
        while buffer.count < bodyStart + length {
            guard fill() else { return nil }
        }
        let body = Array(buffer[bodyStart..<bodyStart + length])
        buffer.removeFirst(bodyStart + length)
        return (status, body)
    }

    private func fill() -> Bool {
        while true {
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress!, $0.count, 0) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { return false }
            buffer.append(contentsOf: scratch[..<count])
            return true
        }
    }
}
