import Foundation
import PerimeterWebhooks
#if canImport(Glibc)
import Glibc
#endif

/// The webhook client of Perimeter before libcurl, kept as the webhook benchmark's yardstick (the
/// "before" of docs/benchmarks.md): a minimal HTTP/1.1 client over POSIX sockets, `http://` only, one
/// request per connection (`Connection: close`), `Content-Length` bodies, connect and response
/// timeouts; it reads the status line and headers and ignores the response body.
struct ConnectionPerRequestClient: WebhookTransport {
    /// The SSRF guard applied before connecting.
    var policy: TargetAddressPolicy
    /// How long connecting may take, in seconds.
    var connectTimeout: TimeInterval
    /// How long sending the request and receiving the status line and headers may take, in seconds.
    var responseTimeout: TimeInterval

    /// Creates a client.
    init(policy: TargetAddressPolicy = TargetAddressPolicy(), connectTimeout: TimeInterval = 5,
                responseTimeout: TimeInterval = 10) {
        self.policy = policy
        self.connectTimeout = connectTimeout
        self.responseTimeout = responseTimeout
    }

    /// POSTs and returns the status code; tries each resolved address in turn until one connects.
    func post(to target: WebhookTarget, headers: [(String, String)], body: [UInt8]) throws(WebhookError) -> Int {
        let addresses = try policy.resolve(target)
        var request = "POST \(target.pathAndQuery) HTTP/1.1\r\nHost: \(target.hostHeader)\r\n"
        request += "User-Agent: Perimeter-Webhooks/1\r\nConnection: close\r\nContent-Length: \(body.count)\r\n"
        for (name, value) in headers {
            let clean = { (text: String) in text.unicodeScalars.allSatisfy { $0 != "\r" && $0 != "\n" } }
            guard clean(name), clean(value) else {
                throw WebhookError(.invalidArgument, "header \(name) contains a line break")
            }
            request += "\(name): \(value)\r\n"
        }
        request += "\r\n"
        let bytes = Array(request.utf8) + body
        var lastError = WebhookError(.transport, "no address to connect to")
        for address in addresses {
            let socket: Int32
            do {
                socket = try connect(to: address, target: target)
            } catch {
                lastError = error
                continue
            }
            defer { close(socket) }
            let deadline = Date().addingTimeInterval(responseTimeout)
            try send(bytes, on: socket, deadline: deadline, target: target)
            return try readStatus(on: socket, deadline: deadline, target: target)
        }
        throw lastError
    }

    private func connect(to address: ResolvedAddress, target: WebhookTarget) throws(WebhookError) -> Int32 {
        let family = address.isIPv6 ? AF_INET6 : AF_INET
        let fd = socket(family, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw failure("cannot create a socket", target, errno) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var result: Int32
        if address.isIPv6 {
            var sa = sockaddr_in6()
            sa.sin6_family = sa_family_t(AF_INET6)
            sa.sin6_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin6_addr) { $0.copyBytes(from: address.bytes) }
            result = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size)) }
            }
        } else {
            var sa = sockaddr_in()
            sa.sin_family = sa_family_t(AF_INET)
            sa.sin_port = address.port.bigEndian
            withUnsafeMutableBytes(of: &sa.sin_addr) { $0.copyBytes(from: address.bytes) }
            result = withUnsafePointer(to: &sa) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
        }
        if result != 0 {
            guard errno == EINPROGRESS else {
                let code = errno
                close(fd)
                throw failure("cannot connect to \(address.text):\(address.port)", target, code)
            }
            guard wait(fd, for: Int16(POLLOUT), deadline: Date().addingTimeInterval(connectTimeout)) else {
                close(fd)
                throw WebhookError(.transport, "connecting to \(target.hostHeader) (\(address.text)) timed out after \(connectTimeout) s")
            }
            var error: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
            if error != 0 {
                close(fd)
                throw failure("cannot connect to \(address.text):\(address.port)", target, error)
            }
        }
        return fd
    }

    private func send(_ bytes: [UInt8], on fd: Int32, deadline: Date, target: WebhookTarget) throws(WebhookError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { raw -> Int in
                guard let base = raw.baseAddress else { return 0 }
                return Glibc.send(fd, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
            }
            if sent > 0 {
                offset += sent
            } else if sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
                guard wait(fd, for: Int16(POLLOUT), deadline: deadline) else {
                    throw WebhookError(.transport, "sending to \(target.hostHeader) timed out after \(responseTimeout) s")
                }
            } else {
                throw failure("sending the request failed", target, errno)
            }
        }
    }

    private func readStatus(on fd: Int32, deadline: Date, target: WebhookTarget) throws(WebhookError) -> Int {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        let terminator: [UInt8] = [13, 10, 13, 10]
        while true {
            if let end = received.firstRange(of: terminator) {
                return try Self.parseStatus(Array(received[..<end.lowerBound]), target: target)
            }
            guard received.count < 65_536 else {
                throw WebhookError(.transport, "the response of \(target.hostHeader) has more than 64 KiB of headers")
            }
            let count = chunk.withUnsafeMutableBytes { raw -> Int in
                guard let base = raw.baseAddress else { return -1 }
                return recv(fd, base, raw.count, 0)
            }
            if count > 0 {
                received.append(contentsOf: chunk[0..<count])
            } else if count == 0 {
                if received.isEmpty {
                    throw WebhookError(.transport, "\(target.hostHeader) closed the connection without a response")
                }
                return try Self.parseStatus(received, target: target)
            } else if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                guard wait(fd, for: Int16(POLLIN), deadline: deadline) else {
                    throw WebhookError(.transport, "\(target.hostHeader) did not respond within \(responseTimeout) s (timeout)")
                }
            } else {
                throw failure("reading the response failed", target, errno)
            }
        }
    }

    /// The status code of a response head (`HTTP/1.1 200 OK…`).
    static func parseStatus(_ head: [UInt8], target: WebhookTarget) throws(WebhookError) -> Int {
        let line = head.split(separator: 10, maxSplits: 1, omittingEmptySubsequences: false).first ?? []
        let text = String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        let parts = text.split(separator: " ", maxSplits: 2)
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3, let status = Int(parts[1]),
              (100...599).contains(status) else {
            throw WebhookError(.transport, "\(target.hostHeader) sent a malformed status line \"\(text.prefix(80))\"")
        }
        return status
    }

    private func wait(_ fd: Int32, for events: Int16, deadline: Date) -> Bool {
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return false }
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, Int32(min(remaining * 1000, 60_000).rounded(.up)))
            if ready > 0 { return true }
            if ready < 0 && errno != EINTR { return true }  // let the next call report the error
        }
    }

    private func failure(_ what: String, _ target: WebhookTarget, _ code: Int32) -> WebhookError {
        WebhookError(.transport, "\(what) (\(target.hostHeader)): \(String(cString: strerror(code)))")
    }
}
