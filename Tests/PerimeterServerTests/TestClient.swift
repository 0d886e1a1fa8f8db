import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A tiny blocking HTTP/1.1 client over a loopback socket, for tests (keep-alive, chunked bodies, SSE).
final class TestClient {
    struct Response {
        var status: Int
        var headers: [String: String]
        var body: [UInt8]
        var text: String { String(decoding: body, as: UTF8.self) }
    }

    enum Failure: Error, Equatable { case connect, closed, timeout, malformed(String) }

    let port: UInt16
    let timeout: Int
    private(set) var fd: Int32
    var buffer: [UInt8] = []
    /// How many times a keep-alive connection that the server had closed was replaced.
    private(set) var reconnections = 0

    init(port: UInt16, timeout: Int = 10) throws {
        self.port = port
        self.timeout = timeout
        fd = try Self.connect(port: port, timeout: timeout)
    }

    static func connect(port: UInt16, timeout: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var tv = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if result != 0 {
            close(fd)
            throw Failure.connect
        }
        return fd
    }

    /// Whether the server has closed this idle connection: readable at end of stream, with nothing
    /// unread. A keep-alive connection may be closed by the server once idle for its timeout (60 s)
    /// — a test suspended that long on a busy machine meets one — and an HTTP client then opens a
    /// new connection for its next request, as this one does.
    var closedByServer: Bool {
        guard buffer.isEmpty else { return false }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 0) == 1 else { return false }
        var byte: UInt8 = 0
        return recv(fd, &byte, 1, Int32(MSG_PEEK | MSG_DONTWAIT)) == 0
    }

    deinit { close(fd) }

    /// Sends a request; first replaces the connection if the server closed it while it was idle.
    func send(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = []) throws {
        if closedByServer {
            close(fd)
            fd = try Self.connect(port: port, timeout: timeout)
            reconnections += 1
        }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if !body.isEmpty || method == "POST" || method == "PUT" { head += "Content-Length: \(body.count)\r\n" }
        head += "\r\n"
        let bytes = Array(head.utf8) + body
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if n <= 0 { throw Failure.closed }
            sent += n
        }
    }

    /// Sends a request and reads its response; a body goes as `application/json` unless `headers` name a
    /// `Content-Type` (the API refuses a body without one: 415).
    func request(_ method: String, _ path: String, headers: [String: String] = [:], body: [UInt8] = []) throws -> Response {
        var headers = headers
        if !body.isEmpty, !headers.keys.contains(where: { $0.lowercased() == "content-type" }) {
            headers["Content-Type"] = "application/json"
        }
        try send(method, path, headers: headers, body: body)
        return try readResponse(headOnly: method == "HEAD")
    }

    func fill() throws {
        var chunk = [UInt8](repeating: 0, count: 65_536)
        let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n == 0 { throw Failure.closed }
        if n < 0 { throw Failure.timeout }
        buffer.append(contentsOf: chunk[0..<n])
    }

    func readLine() throws -> String {
        while true {
            if let index = buffer.firstIndex(of: 10) {
                let line = buffer[..<index]
                buffer.removeFirst(index + 1)
                return String(decoding: line.last == 13 ? line.dropLast() : line, as: UTF8.self)
            }
            try fill()
        }
    }

    func readBytes(_ count: Int) throws -> [UInt8] {
        while buffer.count < count { try fill() }
        let bytes = Array(buffer[..<count])
        buffer.removeFirst(count)
        return bytes
    }

    func readHead() throws -> (Int, [String: String]) {
        let statusLine = try readLine()
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure.malformed(statusLine) }
        var headers: [String: String] = [:]
        while true {
            let line = try readLine()
            if line.isEmpty { break }
            if let colon = line.firstIndex(of: ":") {
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
        return (status, headers)
    }

    func readResponse(headOnly: Bool = false) throws -> Response {
        let (status, headers) = try readHead()
        if headOnly || status == 204 || status == 304 { return Response(status: status, headers: headers, body: []) }
        if let length = headers["content-length"].flatMap(Int.init) {
            return Response(status: status, headers: headers, body: try readBytes(length))
        }
        var body: [UInt8] = []
        while let size = Int(try readLine(), radix: 16), size > 0 {
            body += try readBytes(size)
            _ = try readLine()
        }
        _ = try readLine()
        return Response(status: status, headers: headers, body: body)
    }

    /// Reads chunked SSE data until `predicate` holds for the text received so far.
    func readStream(until predicate: (String) -> Bool) throws -> String {
        var text = ""
        while !predicate(text) {
            let line = try readLine()
            guard let size = Int(line, radix: 16) else { continue }
            if size == 0 { throw Failure.closed }
            text += String(decoding: try readBytes(size), as: UTF8.self)
            _ = try readLine()
        }
        return text
    }
}
