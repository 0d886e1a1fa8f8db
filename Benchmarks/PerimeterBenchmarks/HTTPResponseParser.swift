/// An incremental HTTP/1.1 response parser for the load generator: frames one response at a time from
/// the bytes a connection has read so far (status line, headers, `Content-Length` body).
///
/// It remembers how far it has looked for the end of the head and, once the head is read, the body's
/// extent, so a response that arrives in pieces is not re-scanned from its start. Anything the load
/// generator cannot frame with certainty is a failure with a description: a malformed status line or
/// header, a chunked (`Transfer-Encoding`) or unframed (no `Content-Length`) response, an interim `1xx`
/// answer, a head longer than ``maxHeadLength``. It never traps on its input.
struct HTTPResponseParser {
    /// A complete response: where its body is in the bytes given to ``parse(_:)``.
    struct Response: Equatable {
        /// The status code.
        var status: Int
        /// Offset of the first body byte.
        var bodyStart: Int
        /// Offset just past the body (the next response would start here).
        var end: Int
        /// Whether the server said it will close the connection (`Connection: close`).
        var closes: Bool
    }

    /// What ``parse(_:)`` found.
    enum Result: Equatable {
        /// More bytes are needed.
        case incomplete
        /// A whole response.
        case complete(Response)
        /// The bytes are not a response the load generator can frame; why.
        case malformed(String)
    }

    /// The longest response head accepted (status line and headers).
    static let maxHeadLength = 16_384
    /// The largest body accepted.
    static let maxBodyLength = 64 << 20

    /// Bytes already searched for the blank line that ends the head.
    private var scanned = 0
    /// The head, once read: status, body start, body end, `Connection: close`.
    private var head: Response?

    /// A parser at the start of a response.
    init() {}

    /// Forgets the response just framed (call it after consuming one, before the next one's bytes).
    mutating func reset() {
        scanned = 0
        head = nil
    }

    /// Frames the response at the start of `bytes` (everything read since the last ``reset()``).
    /// - Complexity: O(bytes not yet looked at) per call.
    mutating func parse(_ bytes: UnsafeRawBufferPointer) -> Result {
        if let head {
            return bytes.count >= head.end ? .complete(head) : .incomplete
        }
        // Reject what is plainly not a response early rather than waiting for a blank line that never comes.
        let prefix: StaticString = "HTTP/1."
        let checked = min(bytes.count, prefix.utf8CodeUnitCount)
        for index in 0..<checked where bytes[index] != prefix.utf8Start[index] {
            return .malformed("malformed status line: \(Self.quote(bytes, 0, min(bytes.count, 80)))")
        }
        var index = max(0, scanned - 3)
        var headEnd = -1
        while index + 3 < bytes.count {
            if bytes[index + 3] == 10, bytes[index + 2] == 13, bytes[index + 1] == 10, bytes[index] == 13 {
                headEnd = index
                break
            }
            index += 1
        }
        guard headEnd >= 0 else {
            scanned = bytes.count
            if bytes.count > Self.maxHeadLength {
                return .malformed("no end of the response head within \(Self.maxHeadLength) bytes: \(Self.quote(bytes, 0, 80))")
            }
            return .incomplete
        }
        switch Self.readHead(bytes, headEnd: headEnd) {
        case .failure(let problem):
            return .malformed(problem.description)
        case .success(let response):
            head = response
            return bytes.count >= response.end ? .complete(response) : .incomplete
        }
    }

    /// Reads the status line and headers in `bytes[0..<headEnd]` (`headEnd` is the blank line's CR).
    private static func readHead(_ bytes: UnsafeRawBufferPointer, headEnd: Int) -> Swift.Result<Response, HeadProblem> {
        // "HTTP/1.x NNN" then a space or the end of the line.
        let lineEnd = firstLineEnd(bytes, from: 0, to: headEnd)
        guard lineEnd >= 12, bytes[5] == 49, bytes[6] == 46, bytes[7] == 48 || bytes[7] == 49, bytes[8] == 32,
              isDigit(bytes[9]), isDigit(bytes[10]), isDigit(bytes[11]), lineEnd == 12 || bytes[12] == 32 else {
            return .failure(HeadProblem("malformed status line: \(quote(bytes, 0, min(lineEnd, 80)))"))
        }
        let status = Int(bytes[9] - 48) * 100 + Int(bytes[10] - 48) * 10 + Int(bytes[11] - 48)
        guard status >= 200 else {
            return .failure(HeadProblem("unexpected interim response \(status) (no request asked for one)"))
        }
        var length: Int?
        var closes = false
        var start = lineEnd + 2
        while start < headEnd {
            let end = firstLineEnd(bytes, from: start, to: headEnd)
            guard let colon = firstIndex(of: 58, in: bytes, from: start, to: end), colon > start else {
                return .failure(HeadProblem("malformed header line: \(quote(bytes, start, min(end, start + 80)))"))
            }
            var valueStart = colon + 1, valueEnd = end
            while valueStart < valueEnd, bytes[valueStart] == 32 || bytes[valueStart] == 9 { valueStart += 1 }
            while valueEnd > valueStart, bytes[valueEnd - 1] == 32 || bytes[valueEnd - 1] == 9 { valueEnd -= 1 }
            if nameEquals(bytes, start, colon, "content-length") {
                guard valueEnd > valueStart, valueEnd - valueStart <= 12,
                      (valueStart..<valueEnd).allSatisfy({ isDigit(bytes[$0]) }) else {
                    return .failure(HeadProblem("malformed Content-Length: \(quote(bytes, start, min(end, start + 80)))"))
                }
                let value = (valueStart..<valueEnd).reduce(0) { $0 * 10 + Int(bytes[$1] - 48) }
                if let length, length != value {
                    return .failure(HeadProblem("two different Content-Length headers (\(length) and \(value))"))
                }
                guard value <= maxBodyLength else {
                    return .failure(HeadProblem("Content-Length \(value) is larger than the \(maxBodyLength) bytes accepted"))
                }
                length = value
            } else if nameEquals(bytes, start, colon, "transfer-encoding") {
                return .failure(HeadProblem("transfer-encoded response (Transfer-Encoding: \(quote(bytes, valueStart, min(valueEnd, valueStart + 40)))); only Content-Length framing is supported"))
            } else if nameEquals(bytes, start, colon, "connection") {
                closes = valueEquals(bytes, valueStart, valueEnd, "close")
            }
            start = end + 2
        }
        let bodyStart = headEnd + 4
        if length == nil, status != 204, status != 304 {
            return .failure(HeadProblem("status \(status) response without Content-Length (unframed: its body would end only when the connection closes)"))
        }
        return .success(Response(status: status, bodyStart: bodyStart, end: bodyStart + (length ?? 0), closes: closes))
    }

    /// Why a head cannot be read.
    private struct HeadProblem: Error {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// The offset of the CR of the first CRLF in `from..<to`, or `to`.
    private static func firstLineEnd(_ bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int {
        var index = from
        while index < to {
            if bytes[index] == 13, bytes[index + 1] == 10 { return index }
            index += 1
        }
        return to
    }

    private static func firstIndex(of byte: UInt8, in bytes: UnsafeRawBufferPointer, from: Int, to: Int) -> Int? {
        var index = from
        while index < to {
            if bytes[index] == byte { return index }
            index += 1
        }
        return nil
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 48 && byte <= 57 }

    /// Whether `bytes[start..<end]` is `name`, ASCII case-insensitively (`name` is lowercase).
    private static func nameEquals(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ name: StaticString) -> Bool {
        guard end - start == name.utf8CodeUnitCount else { return false }
        for offset in 0..<(end - start) {
            var byte = bytes[start + offset]
            if byte >= 65 && byte <= 90 { byte += 32 }
            if byte != name.utf8Start[offset] { return false }
        }
        return true
    }

    private static func valueEquals(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int, _ value: StaticString) -> Bool {
        nameEquals(bytes, start, end, value)
    }

    /// `bytes[start..<end]` quoted for a message (invalid UTF-8 replaced).
    static func quote(_ bytes: UnsafeRawBufferPointer, _ start: Int, _ end: Int) -> String {
        let from = min(max(0, start), bytes.count), to = max(from, min(end, bytes.count))
        let text = String(decoding: UnsafeRawBufferPointer(rebasing: bytes[from..<to]), as: UTF8.self)
        return "\"" + text.replacingCRLF() + "\""
    }
}

private extension String {
    /// CR and LF shown as `\r` and `\n`, so a quoted head stays on one line.
    func replacingCRLF() -> String {
        var result = ""
        result.reserveCapacity(count)
        for character in unicodeScalars {
            switch character {
            case "\r": result += "\\r"
            case "\n": result += "\\n"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}
