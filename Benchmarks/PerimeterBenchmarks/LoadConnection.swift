import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking keep-alive client socket that reads `Content-Length` responses.
final class LoadConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    init?(port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            Glibc.close(fd)
            return nil
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
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
