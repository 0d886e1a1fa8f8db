import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking keep-alive client socket that reads `Content-Length` responses: one request at a time, for
/// the benchmark's few control requests (`/metrics`) and the fan-out benchmark's posts; the load itself
/// goes through ``HTTPLoadGenerator``'s event loop.
final class LoadConnection {
    private let descriptor: Int32
    private var buffer: [UInt8] = []
    private var scratch = [UInt8](repeating: 0, count: 65_536)

    /// Connects to 127.0.0.1:`port`; `nil` when the server cannot be reached. A read that waits more
    /// than `timeout` seconds (at least one; 30 by default) fails, so a stuck server fails the benchmark
    /// instead of hanging it; a request that is slow by nature (a large import on a loaded machine)
    /// gives a longer one.
    init?(port: UInt16, timeout: Int = 30) {
        guard let fd = try? SSEClients.connect(port: port) else { return nil }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var limit = timeval(tv_sec: max(1, timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
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

    /// Reads one response: its status and body; `nil` when the connection fails or closes, or the response
    /// cannot be framed (``HTTPResponseParser``: a `Content-Length` body is needed).
    func receiveResponse() -> (status: Int, body: [UInt8])? {
        var parser = HTTPResponseParser()
        while true {
            if !buffer.isEmpty {
                switch buffer.withUnsafeBytes({ parser.parse($0) }) {
                case .complete(let response):
                    let body = Array(buffer[response.bodyStart..<response.end])
                    buffer.removeFirst(response.end)
                    return (response.status, body)
                case .malformed:
                    return nil
                case .incomplete:
                    break
                }
            }
            guard fill() else { return nil }
        }
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
